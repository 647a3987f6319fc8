// `clustersim compare` as a user runs it: a Kineto trace needs the plan it is mapped onto, says
// what it could not map, and bad input is exit 2.
#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const std::string kExecution = std::string(CLUSTERSIM_TEST_DATA) + "/execution/";

TEST(CliCompare, AKinetoTraceIsMappedOntoTheScenarioAndSaysWhatWasLeft) {
  TempDir dir;
  const std::string predicted = (dir / "p.json").string();
  ASSERT_EQ(run_cli({"run", kExecution + "ddp2.yaml", "--json", predicted}, dir).code, 0);
  const std::string kineto = kExecution + "kineto_ddp2_rank0.json";
  const Outcome bare = run_cli({"compare", predicted, kineto}, dir);
  EXPECT_EQ(bare.code, 2);
  EXPECT_NE(bare.err.find("is a Kineto (PyTorch profiler) trace: give --scenario FILE"),
            std::string::npos)
      << bare.err;
  const Outcome mapped =
      run_cli({"compare", predicted, kineto, "--scenario", kExecution + "ddp2.yaml", "--trace",
               (dir / "merged.json").string()},
              dir);
  ASSERT_EQ(mapped.code, 0) << mapped.err;
  EXPECT_NE(mapped.out.find("not mapped: 0 op(s) of the plan, 1 kernel(s) of the trace "
                            "(ncclDevKernel_Broadcast"),
            std::string::npos)
      << mapped.out;
  EXPECT_TRUE(fs::exists(dir / "merged.json"));
  // Another scenario's prediction is refused.
  const std::string other = (dir / "o.json").string();
  ASSERT_EQ(run_cli({"run", kExecution + "pp2.yaml", "--json", other}, dir).code, 0);
  EXPECT_EQ(run_cli({"compare", other, kineto, "--scenario", kExecution + "ddp2.yaml"}, dir).code,
            2);
  // A run's result JSON is not an execution: it has no per-op times.
  const Outcome no_ops = run_cli({"compare", predicted, predicted}, dir);
  EXPECT_EQ(no_ops.code, 2);
  EXPECT_NE(no_ops.err.find("no key 'ops'"), std::string::npos) << no_ops.err;
}

}  // namespace
}  // namespace clustersim::cli::testing
