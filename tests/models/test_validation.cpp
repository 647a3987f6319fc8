// `clustersim validate` (models/validation.hpp): published vs simulated on hand-computed cases,
// failures reported with their reason, and the shipped suite's state (docs/fidelity.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

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
  // 1/24 = 4.2 % is within every bound, 1/11 = 9.1 % within all but 5 %.
  EXPECT_EQ(r.time.within, (std::array<int, 4>{1, 2, 2, 2}));
  // All compute, no communication or idle time.
  EXPECT_NEAR(time.shares.compute, 1.0, 1e-6);
  const auto j = validation_to_json(r);
  EXPECT_EQ(j["cases"].size(), 3u);
  EXPECT_TRUE(j["cases"][0].contains("failure"));
  EXPECT_NEAR(j["time"]["median_abs_error"].get<double>(), r.time.median, 1e-12);
  EXPECT_EQ(j["time"]["within_abs_error"]["0.05"].get<int>(), 1);
  EXPECT_EQ(j["time"]["within_abs_error"]["0.12"].get<int>(), 2);
}

TEST(Validation, AFolderWithoutCasesIsAnError) {
  EXPECT_THROW(run_validation(kData + "/no-such-folder"), std::invalid_argument);
  EXPECT_THROW(run_validation(std::string(CLUSTERSIM_TEST_DATA) + "/topo"), std::invalid_argument);
}

// Figures outside issue 9's 12 % and what the model lacks for each (docs/fidelity.md "Cases
// outside 12 %", which points to the full account). Each case's bound is where its worst figure
// stands today, rounded up: it may only come down. A case that comes inside 12 % must leave this
// list and the docs; none is ever dropped from the suite to pass.
struct TimeOutside {
  double bound;
  const char* lacks;
};
const std::map<std::string, TimeOutside> kTimeOutside = {
    {"dle-resnet50-8xa100-amp.yaml", {0.24, "the host input pipeline (DALI) and its contention"}},
    {"fms-fsdp-llama2-13b-128xa100.yaml",
     {0.14,
      "FSDP1's stream ordering of a per-layer all-reduce as long as the backward; EFA's rate"}},
    {"llama3-405b-128k-cp16-16384gpu.yaml",
     {0.27, "the paper's attention kernels and document masking at 128K are not stated"}},
    {"megatron-llama-13b-256xa100-distopt.yaml", {0.26, "Alibaba's fabric is not described"}},
    {"megatron-llama-13b-256xa100-overlapped.yaml", {0.15, "Alibaba's fabric is not described"}},
    {"megatron-llama-13b-512xa100-distopt.yaml", {0.26, "Alibaba's fabric is not described"}},
    {"megatron-llama-13b-512xa100-overlapped.yaml", {0.13, "Alibaba's fabric is not described"}},
    {"mtnlg-530b-2240gpu.yaml", {0.20, "~6 s an iteration and 11 % a slot no code explains"}},
    {"mtnlg-530b-2800gpu.yaml", {0.21, "~6 s an iteration and 11 % a slot no code explains"}},
    {"mtnlg-530b-3360gpu.yaml", {0.26, "~6 s an iteration and 11 % a slot no code explains"}},
    {"nemo2511-llama3-8b-8xh100-fsdp-fp8.yaml",
     {0.17, "Megatron FSDP's collectives on few SMs (user buffers, NCCL_CTA_POLICY)"}},
};

// The shipped suite (validation/): every case loads and runs, and ZeRO's model-state examples
// hold exactly. Issue 9's bar is a median of 5 % and a worst case of 12 %: every figure not in
// kTimeOutside is held to 12 %, the listed ones to their own bound, and the suite's median to 5 %.
// The history of the bounds (docs/validation.md): the median went from 5.0 to 5.3 % once, on 2 Dec
// 2026, when three inputs of the fms-fsdp cases were corrected from their repository, back to
// 5.0 % the same day once overlapped compute shared its SMs with communication, to 5.3 % again
// when NeMo 25.11's "Model TFLOP/sec/GPU" was compared by its own FLOP count (which had hidden an
// 11 % and a 22 % throughput error as 0 % and 12 %), and to 4.3 % on 3 Dec 2026 once Blackwell
// had its own sustained-compute fit and the LM head's GEMMs ran bf16 under fp8. The worst went
// from 40 to 35 % once Megatron-LLaMA's cases stated their kernel mix, and to 29 % (MT-NLG) with
// DeepSpeed's pipeline engine. On 5 Dec 2026 the compute came to wait for pipeline transfers
// where Megatron's calls do (parallel.pp_p2p_overlap): 5.8 % alone, 4.8 % again once H100's and
// B200's sustained shares were refit and Korthikanti's baselines stated Megatron-LM's
// scatter/gather of pipeline tensors (parallel.pp_scatter_gather). Later that day Megatron's
// asynchronous TP reduction of input gradients (parallel.tp_async_grad_reduce) and the A100 and
// H100 refits (0.86 → 0.83, 0.71 → 0.68) took the median to 4.2 % and the worst to 25 %; NeMo
// 25.11's Llama 3 70B went −10.1 → −13.4 % with H100's share. Then sequence parallelism came to
// re-gather the column-parallel inputs (Transformer Engine's in bulk beside tp_comm_overlap's
// backward) and H100's share was refit to 0.70: the median to 3.7 %, NeMo 25.11's Llama 3 70B
// inside 12 % (−11.4 %), Llama 3 405B's 128K stage up from 23 to 26 % (its bound raised with it:
// the documented fit rule, not the case, moved it).
TEST(ValidationSuite, ShippedCasesRunAndStayWithinTodaysBounds) {
  const ValidationReport r = run_validation(std::string(CLUSTERSIM_SOURCE_DIR) + "/validation");
  std::map<std::string, double> worst_of_listed;
  for (const auto& row : r.rows) {
    EXPECT_TRUE(row.failure.empty()) << row.file << " failed: " << row.failure;
    if (row.kind != "time" || !row.failure.empty()) continue;
    SCOPED_TRACE(row.file + ": " + row.metric);
    const std::string name = std::filesystem::path(row.file).filename().string();
    const auto listed = kTimeOutside.find(name);
    if (listed == kTimeOutside.end()) {
      EXPECT_LE(std::fabs(row.error), 0.12)
          << "published " << row.published << ", simulated " << row.simulated;
      continue;
    }
    EXPECT_LE(std::fabs(row.error), listed->second.bound) << listed->second.lacks;
    worst_of_listed[name] = std::max(worst_of_listed[name], std::fabs(row.error));
  }
  for (const auto& listed : kTimeOutside) {
    const std::string& name = listed.first;
    SCOPED_TRACE(name);
    ASSERT_EQ(worst_of_listed.count(name), 1u) << "listed but not in the suite";
    EXPECT_GT(worst_of_listed[name], 0.12)
        << "now within 12 %: take it off kTimeOutside and docs/fidelity.md's list";
  }
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
