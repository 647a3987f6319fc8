// models::read_calibration_profile, the one reader of a profile file the simulator uses: it reads
// the file once and returns provenance and both fitted parts, and every error names file and key.
#include "models/calibration_profile.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "engine/calibration/json_fields.hpp"

namespace clustersim::models {
namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA) + "/calibration/";

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)calibration_profile_from_json(doc, "p.json");
  } catch (const engine::ProfileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CalibrationProfile, ReadsProvenanceAndBothFittedParts) {
  // tests/data/calibration/a100x8_allreduce.json, written by hand: one all_reduce fit on 8 ranks
  // of one node with two ranges, and two bf16 GEMM points.
  const CalibrationProfile p = read_calibration_profile(kData + "a100x8_allreduce.json");
  EXPECT_EQ(p.provenance.gpu, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(p.provenance.backend, "nccl-tests");
  EXPECT_EQ(p.provenance.ranks, 8u);
  ASSERT_EQ(p.collectives.fits().size(), 1u);
  const engine::CollectiveFit& f = p.collectives.fits()[0];
  EXPECT_EQ(f.type, engine::CollectiveType::all_reduce);
  EXPECT_EQ(f.shape, (engine::GroupShape{8, 1}));
  ASSERT_EQ(f.ranges.size(), 2u);
  EXPECT_EQ(f.ranges[1].busbw, 200e9);
  // 1e10 FLOPs lies a third of the way from 1e9 to 1e12 in log size: 50 + (250 - 50) / 3 TFLOP/s.
  EXPECT_NEAR(p.compute.throughput("bf16", 1e10), (50e12 + 200e12 / 3), 1e3);
  EXPECT_FALSE(p.compute.has("fp16"));
}

TEST(CalibrationProfile, ErrorsNameTheFileAndTheKey) {
  try {
    (void)read_calibration_profile(kData + "malformed_busbw.json");
    FAIL() << "accepted a negative busbw";
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "malformed_busbw.json: fitted.collectives[0].ranges[0].busbw: expected a "
                  "positive number"),
              std::string::npos)
        << e.what();
  }
  const nlohmann::json good = nlohmann::json::parse(R"({
    "format": "clustersim-calibration", "version": 1,
    "provenance": {"date": "2024-05-01T12:00:00Z", "backend": "mpi", "ranks": 2, "nodes": 1},
    "fitted": {"collectives": [], "compute": {"gemm": {}}}})");
  EXPECT_EQ(error_of(good), "(no error)");  // measurements are calibrate's, not required here
  nlohmann::json j = good;
  j["format"] = "nccl-tests";
  EXPECT_NE(error_of(j).find("p.json: format: expected \"clustersim-calibration\""),
            std::string::npos);
  j = good;
  j["fitted"].erase("compute");
  EXPECT_NE(error_of(j).find("p.json: fitted.compute: missing key"), std::string::npos)
      << error_of(j);
  j = good;
  j["provenance"]["ranks"] = "two";
  EXPECT_NE(error_of(j).find("p.json: provenance.ranks"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(nlohmann::json::array()).find("p.json: (top level): expected a JSON object"),
            std::string::npos)
      << error_of(nlohmann::json::array());
}

TEST(CalibrationProfile, MissingFileNamesIt) {
  try {
    (void)read_calibration_profile("/nonexistent/p.json");
    FAIL();
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/p.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim::models
