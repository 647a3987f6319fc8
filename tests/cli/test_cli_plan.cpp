// `clustersim plan` as a user runs it: bad flags, and the best plan written as a scenario that
// `clustersim run` reproduces.
#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const std::string kPcie = kScenarios + "/llama2-7b-pcie-tp4.yaml";

TEST(CliPlan, GpusThatAreNotWholeNodesAreBadInput) {
  TempDir dir;
  const Outcome o = run_cli({"plan", kPcie, "--gpus", "12"}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--gpus 12: not whole nodes of 8 GPUs"), std::string::npos) << o.err;
}

TEST(CliPlan, BestPlanWrittenWithOutRunsToTheTablesFlowFigure) {
  TempDir dir;
  const std::string best = (dir / "best.yaml").string();
  const Outcome plan = run_cli({"plan", kPcie, "--top", "1", "--out", best}, dir);
  ASSERT_EQ(plan.code, 0) << plan.err;
  // The table's row: "  1  <plan>  <est. s>  <flow s>  <MFU>% ..."; the flow figure, 3 decimals.
  const std::size_t row = plan.out.find("\n  1  ");
  ASSERT_NE(row, std::string::npos) << plan.out;
  std::istringstream fields(plan.out.substr(row, plan.out.find('\n', row + 1) - row));
  std::vector<std::string> words{std::istream_iterator<std::string>(fields), {}};
  const auto mfu = std::find_if(words.begin(), words.end(),
                                [](const std::string& w) { return w.back() == '%'; });
  ASSERT_GE(mfu - words.begin(), 2) << plan.out;
  const std::string flow_s = *(mfu - 1);
  const Outcome run = run_cli({"run", best}, dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("iteration time           " + flow_s + " s"), std::string::npos)
      << flow_s << "\n"
      << run.out;
}

}  // namespace
}  // namespace clustersim::cli::testing
