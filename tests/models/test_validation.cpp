// `clustersim validate` (models/validation.hpp): published vs simulated on hand-computed cases,
// failures reported with their reason, and the shipped suite's state (docs/fidelity.md).
#include <gtest/gtest.h>

#include <cmath>

#include "models/validation.hpp"

namespace clustersim::models {
namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA) + "/validation";

TEST(Validation, ComparesEveryPublishedFigureAndReportsFailures) {
  const ValidationReport r = run_validation(kData);
  ASSERT_EQ(r.rows.size(), 3u);  // two figures of two-layers.yaml, one of sub/broken.yaml
  // sub/broken.yaml sorts before two-layers.yaml.
  EXPECT_EQ(r.rows[0].file, "sub/broken.yaml");
  EXPECT_NE(r.rows[0].failure.find("sub/broken.yaml:9:12: parallel.tpp"), std::string::npos)
      << r.rows[0].failure;
  const ValidationRow& time = r.rows[1];
  EXPECT_EQ(time.metric, "iteration_time_s");
  EXPECT_NEAR(time.simulated, 0.24, 1e-6);
  EXPECT_NEAR(time.error, -1.0 / 11.0, 1e-5);
  const ValidationRow& rate = r.rows[2];
  EXPECT_NEAR(rate.simulated, 4 / 0.24, 1e-3);
  EXPECT_NEAR(rate.error, (4 / 0.24 - 16.0) / 16.0, 1e-5);
  // Summary: the two compared figures' |errors| are 1/11 and 1/24; the broken one is counted.
  EXPECT_EQ(r.time.cases, 3);
  EXPECT_EQ(r.time.failed, 1);
  EXPECT_NEAR(r.time.median, 0.5 * (1.0 / 11 + 1.0 / 24), 1e-5);
  EXPECT_NEAR(r.time.worst, 1.0 / 11, 1e-5);
  EXPECT_EQ(r.time.worst_row, "two-layers.yaml: iteration_time_s");
  // All compute, no communication or idle time.
  EXPECT_NEAR(time.shares.compute, 1.0, 1e-6);
  const auto j = validation_to_json(r);
  EXPECT_EQ(j["cases"].size(), 3u);
  EXPECT_TRUE(j["cases"][0].contains("failure"));
  EXPECT_NEAR(j["time"]["median_abs_error"].get<double>(), r.time.median, 1e-12);
}

TEST(Validation, AFolderWithoutCasesIsAnError) {
  EXPECT_THROW(run_validation(kData + "/no-such-folder"), std::invalid_argument);
  EXPECT_THROW(run_validation(std::string(CLUSTERSIM_TEST_DATA) + "/topo"), std::invalid_argument);
}

// The shipped suite (validation/): every case loads and runs, and ZeRO's model-state examples
// hold exactly. The time bounds are where the model stands today (docs/validation.md); issue
// 9's target is a median of 5 % and a worst case of 12 %, which the model
// does not reach yet. Lower them as the model improves; never raise them for the model. (The
// median bound went from 5.0 to 5.3 % once, on 2 Dec 2026, when three inputs of the fms-fsdp cases
// were corrected from their repository: network, eager model, HSDP unfolded; back to 5.0 % the
// same day once overlapped compute shares its SMs with communication: 4.9 %; and to 5.3 % again
// when NeMo 25.11's "Model TFLOP/sec/GPU" was compared by its own FLOP count instead of ours,
// which had hidden an 11 % and a 22 % throughput error as 0 % and 12 %. The worst bound went
// from 40 to 35 % once Megatron-LLaMA's cases stated their kernel mix: 39.7 -> 34.5 %, now MT-NLG;
// to 29 % with DeepSpeed's pipeline engine: 28.7 %. The median is at issue 9's 5 % since 3 Dec
// 2026: 4.3 %, once a second B200 case (NeMo 25.11's 405B on 128 B200) let Blackwell have its own
// sustained-compute fit instead of H100's: the two B200 cases were -8 and -11 %; 4.9 % with NeMo
// 25.11's Llama 3 70B on 64 H100 added the same day, at -10.5 %; 4.3 % once the LM head's GEMMs
// run bf16 under fp8 and the H100 and B200 shares were refit for it.)
TEST(ValidationSuite, ShippedCasesRunAndStayWithinTodaysBounds) {
  const ValidationReport r = run_validation(std::string(CLUSTERSIM_SOURCE_DIR) + "/validation");
  for (const auto& row : r.rows)
    EXPECT_TRUE(row.failure.empty()) << row.file << " failed: " << row.failure;
  for (const auto& row : r.rows)
    if (row.metric == "model_state_gb") {
      EXPECT_TRUE(row.failure.empty()) << row.file;
      EXPECT_LT(std::fabs(row.error), 0.02) << row.file;
    }
  EXPECT_EQ(r.time.failed, 0);
  EXPECT_GE(r.time.cases, 65);
  EXPECT_LE(r.time.median, 0.05);
  EXPECT_LE(r.time.worst, 0.29);
}

}  // namespace
}  // namespace clustersim::models
