// The calibration profile: JSON round trip, readers' errors, shape lookup and GEMM interpolation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "calibrate/profile.hpp"
#include "engine/calibration/json_fields.hpp"
#include "models/calibration_profile.hpp"

namespace clustersim::calibrate {
namespace {

using engine::CollectiveFit;
using engine::CollectiveProfile;
using engine::CollectiveType;
using engine::GroupShape;

CollectiveFit fit(CollectiveType t, std::uint32_t ranks, std::uint32_t nodes, double busbw) {
  CollectiveFit f;
  f.type = t;
  f.shape = {ranks, nodes};
  f.bus_factor = 1.0;
  f.ranges = {{8.0, 1e9, 1e-5, busbw, 0.01}};
  return f;
}

Profile sample_profile() {
  Profile p;
  p.provenance.host = "node01";
  p.provenance.gpu = "NVIDIA H100 80GB HBM3";
  p.provenance.date = "2024-05-01T12:00:00Z";
  p.provenance.backend = "nccl-tests";
  p.provenance.ranks = 8;
  p.provenance.nccl_version = "2.21.5";
  p.measurements.copies.push_back({"h2d", 1 << 20, 4e-5});
  p.measurements.gemms.push_back({1024, 1024, 1024, "bf16", 1e-5});
  p.measurements.gemms.push_back({2048, 2048, 64, "bf16", 1e-4, 16});  // a batched shape
  p.measurements.collectives.push_back(
      {"all_reduce", 8, 1, 1 << 20, 262144, "float", false, 3e-5, 3.5e10, 6.1e10, 0});
  CollectiveFit ar = fit(CollectiveType::all_reduce, 8, 1, 1.8e11);
  ar.bus_factor = 1.75;
  ar.ranges = {{8, 65536, 2e-5, 1e10, 0.02}, {131072, 1e9, 4e-5, 1.8e11, 0.01}};
  p.collectives = CollectiveProfile({ar});
  p.compute = models::ComputeProfile({{"bf16", {{1e6, 1e12}, {1e8, 3e12}}}});
  return p;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("clustersim_profile_test_" + name)).string();
}

TEST(CollectiveFit, TimeIsAlphaPlusBytesTimesFactorOverBusbw) {
  CollectiveFit f = fit(CollectiveType::all_reduce, 8, 1, 1e11);
  f.bus_factor = 2.0 * 7 / 8;  // ring all-reduce over 8 ranks (nccl-tests)
  // 1e-5 + 1e9 · 1.75 / 1e11 = 0.01751 s
  EXPECT_NEAR(f.time_seconds(1e9), 0.01751, 1e-12);
}

TEST(CollectiveFit, PicksTheRangeHoldingTheSize) {
  const Profile p = sample_profile();
  const CollectiveFit& f = p.collectives.fits().front();
  EXPECT_EQ(f.range_for(1024).busbw, 1e10);
  EXPECT_EQ(f.range_for(1 << 20).busbw, 1.8e11);
  EXPECT_EQ(f.range_for(1.0).busbw, 1e10);     // below the first: the first
  EXPECT_EQ(f.range_for(1e12).busbw, 1.8e11);  // beyond the last: the last
  EXPECT_EQ(f.range_for(100000).busbw, 1e10);  // between two ranges: the lower one
}

TEST(CollectiveProfile, LookupSaysExactOrNearest) {
  const CollectiveProfile prof(
      {fit(CollectiveType::all_reduce, 8, 1, 1), fit(CollectiveType::all_reduce, 16, 2, 2),
       fit(CollectiveType::all_reduce, 64, 8, 3), fit(CollectiveType::all_gather, 8, 1, 4)});
  const auto exact = prof.lookup(CollectiveType::all_reduce, {16, 2});
  ASSERT_NE(exact.fit, nullptr);
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.fit->ranges[0].busbw, 2);
  // 4 ranks in one node: intra-node, so the 8-rank intra entry, not a multi-node one.
  const auto intra = prof.lookup(CollectiveType::all_reduce, {4, 1});
  EXPECT_FALSE(intra.exact);
  EXPECT_EQ(intra.fit->ranges[0].busbw, 1);
  EXPECT_EQ(intra.note, "nearest: 8 ranks on 1 node for requested 4 ranks on 1 node");
  // 48 ranks on 6 nodes: |log2(48/64)|+|log2(6/8)| = 0.83 beats |log2 3|+|log2 3| = 3.17.
  EXPECT_EQ(prof.lookup(CollectiveType::all_reduce, {48, 6}).fit->ranges[0].busbw, 3);
  EXPECT_EQ(prof.lookup(CollectiveType::broadcast, {8, 1}).fit, nullptr);
}

TEST(CollectiveProfile, RejectsDuplicatesAndBadRanges) {
  EXPECT_THROW(CollectiveProfile({fit(CollectiveType::all_reduce, 8, 1, 1),
                                  fit(CollectiveType::all_reduce, 8, 1, 2)}),
               engine::ProfileError);
  CollectiveFit overlapping = fit(CollectiveType::all_reduce, 8, 1, 1);
  overlapping.ranges.push_back({1000, 2e9, 1e-5, 1, 0});
  EXPECT_THROW(CollectiveProfile({overlapping}), engine::ProfileError);
}

TEST(ComputeProfile, InterpolatesOnLogSizeAndClamps) {
  const models::ComputeProfile c({{"bf16", {{1e8, 3e12}, {1e6, 1e12}}}});
  // 1e7 lies halfway between 1e6 and 1e8 on a log scale: (1e12 + 3e12) / 2.
  EXPECT_NEAR(c.throughput("bf16", 1e7), 2e12, 1e3);
  EXPECT_EQ(c.throughput("bf16", 1e3), 1e12);
  EXPECT_EQ(c.throughput("bf16", 1e12), 3e12);
  EXPECT_NEAR(c.efficiency("bf16", 1e7, 312e12), 2e12 / 312e12, 1e-15);
  EXPECT_EQ(c.efficiency("bf16", 1e12, 1e12), 1.0);  // capped
  EXPECT_THROW((void)c.throughput("fp32", 1e7), std::out_of_range);
}

TEST(Profile, RoundTripsThroughAFile) {
  const std::string path = temp_path("roundtrip.json");
  write_profile(sample_profile(), path);
  const Profile back = read_profile(path);
  EXPECT_EQ(back.provenance.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back.provenance.nccl_version, "2.21.5");
  ASSERT_EQ(back.measurements.collectives.size(), 1u);
  EXPECT_EQ(back.measurements.collectives[0].wrong, 0);
  EXPECT_EQ(back.measurements.gemms[0].flops(), 2.0 * 1024 * 1024 * 1024);
  ASSERT_EQ(back.measurements.gemms.size(), 2u);
  EXPECT_EQ(back.measurements.gemms[1].batch, 16u);
  EXPECT_EQ(back.measurements.gemms[1].flops(), 2.0 * 2048 * 2048 * 64 * 16);
  ASSERT_EQ(back.collectives.fits().size(), 1u);
  EXPECT_EQ(back.collectives.fits()[0].ranges[1].busbw, 1.8e11);
  EXPECT_NEAR(back.compute.throughput("bf16", 1e7), 2e12, 1e3);
  // The simulator's reader sees the same provenance and fitted parts.
  const models::CalibrationProfile sim = models::read_calibration_profile(path);
  EXPECT_EQ(sim.provenance.host, "node01");
  ASSERT_EQ(sim.collectives.fits().size(), 1u);
  EXPECT_EQ(sim.collectives.fits()[0].ranges[0].alpha_s, 2e-5);
  EXPECT_NEAR(sim.compute.throughput("bf16", 1e7), 2e12, 1e3);
  EXPECT_TRUE(models::read_compute_profile(path).has("bf16"));
  // Atomic write: nothing but the profile is left in the folder.
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_EQ(e.path().filename().string().find("roundtrip.json.tmp"), std::string::npos)
        << e.path();
  std::filesystem::remove(path);
}

void expect_error(const nlohmann::json& doc, const std::string& needle) {
  try {
    (void)profile_from_json(doc, "p.json");
    ADD_FAILURE() << "no error for " << needle;
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Profile, ReaderErrorsNameTheFileAndKey) {
  const nlohmann::json good = to_json(sample_profile());
  nlohmann::json j = good;
  j["fitted"]["collectives"][0]["ranges"][1]["busbw"] = -1;
  expect_error(j, "p.json: fitted.collectives[0].ranges[1].busbw: expected a positive number");
  j = good;
  j["fitted"]["collectives"][0]["collective"] = "allreduce";
  expect_error(j, "p.json: fitted.collectives[0].collective: unknown collective 'allreduce'");
  j = good;
  j["measurements"].erase("gemms");
  expect_error(j, "p.json: measurements.gemms: missing key");
  j = good;
  j["fitted"]["compute"]["gemm"]["int4"] =
      nlohmann::json::array({{{"flops", 1}, {"flops_per_s", 1}}});
  expect_error(j, "p.json: fitted.compute.gemm.int4: unknown dtype");
  j = good;
  j["version"] = 7;
  expect_error(j, "p.json: version: unsupported version 7");
  j = good;
  j["provenance"]["backend"] = "tpu";
  expect_error(j, "p.json: provenance.backend: unknown backend 'tpu'");
}

TEST(Profile, MissingOrInvalidFileIsAClearError) {
  EXPECT_THROW((void)read_profile("/nonexistent/profile.json"), engine::ProfileError);
  const std::string path = temp_path("invalid.json");
  std::ofstream(path) << "{ not json";
  try {
    (void)read_profile(path);
    ADD_FAILURE();
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not valid JSON"), std::string::npos);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace clustersim::calibrate
