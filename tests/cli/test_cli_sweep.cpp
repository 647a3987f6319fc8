// `clustersim sweep` as a user runs it: exit codes, the summary and the files it writes.
#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const std::string kStudy = kScenarios + "/gpt2-xl-bucket-study.yaml";

TEST(CliSweep, BadVaryAndOutputsThatAreInputsAreBadInput) {
  TempDir dir;
  const Outcome range = run_cli({"sweep", kStudy, "--vary", "parallel.bucket_mb=8..1"}, dir);
  EXPECT_EQ(range.code, 2);
  EXPECT_NE(range.err.find("--vary parallel.bucket_mb=8..1"), std::string::npos) << range.err;
  const Outcome clobber =
      run_cli({"sweep", kStudy, "--vary", "parallel.bucket_mb=5", "--csv", kStudy}, dir);
  EXPECT_EQ(clobber.code, 2);
  EXPECT_NE(clobber.err.find("is an input"), std::string::npos) << clobber.err;
}

TEST(CliSweep, ResumeRunsOnlyWhatIsMissingAndWritesTheSameFile) {
  TempDir dir;
  const std::string full = (dir / "full.json").string();
  const std::string resumed = (dir / "resumed.json").string();
  ASSERT_EQ(
      run_cli({"sweep", kStudy, "--vary", "parallel.bucket_mb=5,50", "--json", full}, dir).code, 0);
  // A first run of the first value only, then the whole sweep resumed from it.
  ASSERT_EQ(
      run_cli({"sweep", kStudy, "--vary", "parallel.bucket_mb=5", "--resume", resumed}, dir).code,
      0);
  const Outcome second =
      run_cli({"sweep", kStudy, "--vary", "parallel.bucket_mb=5,50", "--resume", resumed}, dir);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("2 points: 2 ran, 0 invalid, 0 failed (1 resumed)"), std::string::npos)
      << second.out;
  EXPECT_EQ(read_file(resumed), read_file(full));
}

}  // namespace
}  // namespace clustersim::cli::testing
