// A calibration profile whose figures cannot be true on the scenario's cluster is bad input
// naming the scenario key, the profile and its key (docs/calibration.md "Plausibility"), and a
// profile measured on another GPU family is a note, or an error with --strict (issue 10).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(CLUSTERSIM_TEST_DATA) + "/calibration/";

// a100x8_allreduce.json, edited by `edit` and written beside the scenario it calibrates.
class EditedProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustersim-plausible-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
    std::ifstream in(kData + "a100x8_allreduce.json");
    profile_ = nlohmann::json::parse(in);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs ddp_a100x8.yaml (8 × A100-SXM4-80GB on NVSwitch) with the edited profile; "" when it
  // runs, else the error.
  std::string run(bool strict = false, const std::string& set = "") {
    const std::string path = (dir_ / "p.json").string();
    std::ofstream(path) << profile_.dump();
    try {
      std::vector<std::string> overrides = {"simulation.calibration=" + path};
      if (!set.empty()) overrides.push_back(set);
      const models::Scenario sc = models::load_scenario(kData + "ddp_a100x8.yaml", overrides);
      models::RunOptions options;
      options.strict = strict;
      const models::RunOutput out = models::run_scenario(sc, options);
      notes_ = out.result.notes;
      return "";
    } catch (const models::ScenarioError& e) {
      return e.what();
    }
  }

  fs::path dir_;
  nlohmann::json profile_;
  std::vector<std::string> notes_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(EditedProfile, TheShippedProfileIsPlausible) {
  EXPECT_EQ(run(), "");
}

TEST_F(EditedProfile, AGemmFasterThanThePeakIsRefused) {
  // NVIDIA's A100 datasheet: 312 TFLOP/s dense bf16. 320 TFLOP/s cannot be measured on one.
  profile_["fitted"]["compute"]["gemm"]["bf16"][1]["flops_per_s"] = 320e12;
  const std::string m = run();
  EXPECT_TRUE(contains(m, "simulation.calibration: ")) << m;
  EXPECT_TRUE(contains(m, "p.json: fitted.compute.gemm.bf16: a GEMM at 3.2e+14 FLOP/s")) << m;
  EXPECT_TRUE(contains(m, "bf16 peak of 3.12e+14 FLOP/s")) << m;
  // Just under the peak is possible.
  profile_["fitted"]["compute"]["gemm"]["bf16"][1]["flops_per_s"] = 310e12;
  EXPECT_EQ(run(), "");
}

TEST_F(EditedProfile, KernelsFasterThanHbmAreRefused) {
  // A100-SXM4-80GB: 2,039 GB/s of HBM2e (NVIDIA's datasheet).
  profile_["fitted"]["compute"]["memory_bandwidth"] = 3e12;
  const std::string m = run();
  EXPECT_TRUE(contains(m, "p.json: fitted.compute.memory_bandwidth: 3e+12 B/s is more than")) << m;
  profile_["fitted"]["compute"]["memory_bandwidth"] = 1.5e12;
  EXPECT_EQ(run(), "");
}

TEST_F(EditedProfile, ABusBandwidthFarAboveTheFastestLinkIsRefused) {
  // DGX A100: NVLink 3, 600 GB/s per GPU in both directions, 300 GB/s each way; twice that is
  // 600 GB/s, so 700 GB/s of bus bandwidth cannot be true.
  profile_["fitted"]["collectives"][0]["ranges"][1]["busbw"] = 700e9;
  const std::string m = run();
  EXPECT_TRUE(contains(m,
                       "p.json: fitted.collectives: all_reduce over 8 ranks on 1 node has "
                       "busbw 7e+11 B/s"))
      << m;
}

// The fit writes 1 PB/s for a range whose time does not grow with size (a quick, noisy sweep of a
// CPU cluster under load gave one): it means "no bandwidth term", not a bandwidth, so it is
// accepted; any other figure that high is refused. The calibration's own output must load.
TEST_F(EditedProfile, ALatencyOnlyRangeIsNotABandwidth) {
  profile_["fitted"]["collectives"][0]["ranges"][0]["busbw"] = 1e15;
  EXPECT_EQ(run(), "");
  profile_["fitted"]["collectives"][0]["ranges"][0]["busbw"] = 9e14;
  EXPECT_TRUE(contains(run(), "busbw 9e+14 B/s"));
}

TEST_F(EditedProfile, AnotherGpuIsANoteOrWithStrictAnError) {
  profile_["provenance"]["gpu"] = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(run(), "");
  EXPECT_TRUE(std::any_of(notes_.begin(), notes_.end(), [](const std::string& n) {
    return contains(n, "was measured on NVIDIA H100 80GB HBM3, not on the scenario's");
  }));
  const std::string m = run(/*strict=*/true);
  EXPECT_TRUE(contains(m, "simulation.calibration: profile p.json was measured on NVIDIA H100"))
      << m;
  EXPECT_TRUE(contains(m, "(--strict)")) << m;
}

// The scenario's simulation.nccl.version against the profile's: NCCL 2.18.3 and 2.21.5 differ in
// minor version (a note, or with --strict an error on the key); 2.21.1 and 2.21.5 only in patch,
// and a profile or scenario that names no version has nothing to compare.
TEST_F(EditedProfile, AnotherNcclIsANoteOrWithStrictAnError) {
  auto noted = [this] {
    return std::any_of(notes_.begin(), notes_.end(), [](const std::string& n) {
      return contains(n, "was measured with NCCL 2.18.3, not the scenario's 2.21.5");
    });
  };
  profile_["provenance"]["nccl_version"] = "2.18.3";
  EXPECT_EQ(run(false, "simulation.nccl.version=2.21.5"), "");
  EXPECT_TRUE(noted());
  const std::string m = run(true, "simulation.nccl.version=2.21.5");
  EXPECT_TRUE(contains(m,
                       "simulation.nccl.version: profile p.json was measured with NCCL 2.18.3, "
                       "not the scenario's 2.21.5 (--strict); allowed: a profile measured with "
                       "NCCL 2.21"))
      << m;
  EXPECT_EQ(run(true), "");  // the scenario names no NCCL
  EXPECT_FALSE(noted());
  profile_["provenance"]["nccl_version"] = "2.21.1";
  EXPECT_EQ(run(true, "simulation.nccl.version=2.21.5"), "");
  profile_["provenance"]["nccl_version"] = "";
  EXPECT_EQ(run(true, "simulation.nccl.version=2.21.5"), "");
  EXPECT_TRUE(contains(run(false, "simulation.nccl.version=latest"),
                       "simulation.nccl.version: 'latest' is not an NCCL version; allowed: "
                       "MAJOR.MINOR[.PATCH]"));
}

}  // namespace
}  // namespace clustersim
