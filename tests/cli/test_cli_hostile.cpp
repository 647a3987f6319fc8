// Hostile input, huge input, interrupted runs (issue 10), as a user meets them: each case checks
// the exit code, the message's flag and key, and that nothing was written or clobbered.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <sstream>
#include <thread>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const std::string kLlama = kScenarios + "/llama2-7b-ddp-2xdgx-a100.yaml";
const std::string kData = CLUSTERSIM_TEST_DATA;

TEST(Hostile, HugeCountsAreBadInputNamingTheFlagAndKey) {
  const TempDir dir;
  // Each used to die of SIGFPE (a world size wrapped to 0), std::bad_alloc (exit 1, no key) or
  // print a negative iteration time.
  for (const auto& [set, key] : {std::pair{"cluster.nodes=536870912", "cluster.nodes"},
                                 {"cluster.gpus_per_node=65536", "cluster.gpus_per_node"},
                                 {"training.seq_len=1e9", "training.seq_len"},
                                 {"model.hidden_size=1e9", "model.hidden_size"},
                                 {"simulation.iterations=1e6", "simulation.iterations"},
                                 {"training.global_batch=1e9", "training.global_batch"},
                                 {"cluster.network.spines=1e9", "cluster.network.spines"}}) {
    const Outcome o = run_cli({"run", kLlama, "--set", set}, dir);
    EXPECT_EQ(o.code, 2) << set << ": " << o.err;
    EXPECT_NE(o.err.find("--set " + std::string(set) + ": " + key + ": "), std::string::npos)
        << o.err;
    EXPECT_EQ(o.out.find("iteration time"), std::string::npos) << o.out;
  }
}

TEST(Hostile, ARunLongerThanTheClockIsBadInputAndPrintsNoFigure) {
  const TempDir dir;
  // A 1e-30 Gb/s NIC: the all-reduce would take 1e33 s. It used to print a wrapped figure.
  const Outcome o = run_cli({"run", kLlama, "--set", "cluster.network.nic_bandwidth=1e-30Gb/s",
                             "--json", (dir / "r.json").string()},
                            dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("the simulated clock (64-bit picoseconds) would overflow"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.out.find("iteration time"), std::string::npos) << o.out;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Hostile, TwoOutputsOnOneFileAreRefusedBeforeRunning) {
  const TempDir dir;
  // The trace used to replace the JSON while the summary said both were written.
  const std::string x = (dir / "x.json").string();
  const Outcome o = run_cli({"run", kLlama, "--json", x, "--trace", x}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--trace " + x + " is also the --json output"), std::string::npos) << o.err;
  EXPECT_TRUE(dir.entries().empty());
  // The same file by another spelling is the same file.
  const Outcome o2 =
      run_cli({"run", kLlama, "--json", x, "--trace", (dir / "." / "x.json").string()}, dir);
  EXPECT_EQ(o2.code, 2) << o2.err;
  // Writing twice into /dev/null destroys nothing and stays allowed.
  const Outcome o3 = run_cli({"run", kLlama, "--json", "/dev/null", "--trace", "/dev/null"}, dir);
  EXPECT_EQ(o3.code, 0) << o3.err;
}

TEST(Hostile, OutputOverTheCalibrationProfileIsRefusedBeforeRunning) {
  const TempDir dir;
  fs::copy_file(kData + "/calibration/ddp_a100x8.yaml", dir / "s.yaml");
  fs::copy_file(kData + "/calibration/a100x8_allreduce.json", dir / "a100x8_allreduce.json");
  const std::string profile = read_file(dir / "a100x8_allreduce.json");
  for (const char* flag : {"--json", "--trace"}) {
    const Outcome o = run_cli(
        {"run", (dir / "s.yaml").string(), flag, (dir / "a100x8_allreduce.json").string()}, dir);
    EXPECT_EQ(o.code, 2) << flag << ": " << o.err;
    EXPECT_NE(o.err.find("is an input"), std::string::npos) << o.err;
    EXPECT_EQ(o.out.find("iteration time"), std::string::npos) << "ran before refusing";
    EXPECT_EQ(read_file(dir / "a100x8_allreduce.json"), profile) << flag;
  }
}

TEST(Hostile, ImportNcclTestsRefusesToWriteOverItsLog) {
  const TempDir dir;
  fs::copy_file(kData + "/nccl-tests/all_reduce_perf.h100x8.log", dir / "ar.log");
  const std::string log = read_file(dir / "ar.log");
  const Outcome o = run_cli({"calibrate", "import-nccl-tests", (dir / "ar.log").string(), "--out",
                             (dir / "ar.log").string()},
                            dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--out " + (dir / "ar.log").string() + " is an input"), std::string::npos)
      << o.err;
  EXPECT_EQ(read_file(dir / "ar.log"), log);
}

TEST(Hostile, CalibrateChecksItsOutputBeforeMeasuring) {
  const TempDir dir;
  // It used to be found only after measuring, by the back end.
  const std::string out = (dir / "no" / "p.json").string();
  const Outcome o = run_cli({"calibrate", "--backend", "mpi", "--quick", "--out", out}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--out " + out + ": directory"), std::string::npos) << o.err;
}

// An older nccl-tests log has no "# Collective test starting" line: --collective says which.
TEST(Hostile, ImportNcclTestsCollectiveNamesWhatAnOldLogMeasured) {
  const TempDir dir;
  std::string log = read_file(kData + "/nccl-tests/all_reduce_perf.h100x8.log");
  const auto start = log.find("# Collective test starting");
  ASSERT_NE(start, std::string::npos);
  log.erase(start, log.find('\n', start) + 1 - start);
  const auto old = dir.write("h100.log", log);
  const std::string out = (dir / "p.json").string();
  Outcome o = run_cli({"calibrate", "import-nccl-tests", old.string(), "--out", out}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("allowed: --collective NAME"), std::string::npos) << o.err;
  o = run_cli(
      {"calibrate", "import-nccl-tests", old.string(), "--collective", "all_reduce", "--out", out},
      dir);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(read_file(out).find("\"all_reduce\""), std::string::npos);
  // A log that names its collective must agree with the flag.
  o = run_cli({"calibrate", "import-nccl-tests", kData + "/nccl-tests/all_reduce_perf.h100x8.log",
               "--collective", "all_gather", "--out", (dir / "q.json").string()},
              dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("the log is a all_reduce test but --collective says all_gather"),
            std::string::npos)
      << o.err;
  // A log with one size cannot be fitted: bad input (it was exit 1).
  std::string one = read_file(kData + "/nccl-tests/all_reduce_perf.h100x8.log");
  std::string kept;
  bool first_row = true;
  std::istringstream lines(one);
  for (std::string line; std::getline(lines, line);) {
    const bool row = !line.empty() && line.find_first_not_of(" ") != std::string::npos &&
                     line[line.find_first_not_of(" ")] != '#' &&
                     std::isdigit(static_cast<unsigned char>(line[line.find_first_not_of(" ")]));
    if (row && !first_row) continue;
    first_row = first_row && !row;
    kept += line + "\n";
  }
  const auto single = dir.write("all_reduce_perf.one.log", kept);
  o = run_cli(
      {"calibrate", "import-nccl-tests", single.string(), "--out", (dir / "r.json").string()}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("need at least two sizes"), std::string::npos) << o.err;
}

TEST(Hostile, DashReadsTheScenarioFromStandardInput) {
  const TempDir dir;
  const std::string cmd =
      quote(kBinary) + " run - <" + quote(kLlama) + " >" + quote((dir / "out").string()) + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_file(dir / "out");
  EXPECT_NE(read_file(dir / "out").find("iteration time"), std::string::npos);
  // Errors cite <stdin> with the line.
  const auto bad = dir.write("bad.yaml", "cluster: {nodes: two, node: dgx-a100}\n");
  const std::string cmd2 =
      quote(kBinary) + " run - <" + quote(bad.string()) + " 2>" + quote((dir / "err").string());
  const int status2 = std::system(cmd2.c_str());
  EXPECT_EQ(WEXITSTATUS(status2), 2);
  EXPECT_NE(read_file(dir / "err").find("<stdin>:1:18: cluster.nodes:"), std::string::npos)
      << read_file(dir / "err");
}

TEST(Hostile, JsonToStandardOutputKeepsTheSummaryWhetherAFileOrAPipe) {
  const TempDir dir;
  // Redirected to a file, /dev/stdout resolved to it and the rename replaced it: the summary was
  // lost. Into a pipe, it resolved to "pipe:[N]" and the run failed.
  for (const std::string& redirect : {std::string(" >"), std::string(" | cat >")}) {
    // The exit code of clustersim itself, not of cat.
    const std::string cmd = "{ " + quote(kBinary) + " run " + quote(kLlama) +
                            " --json /dev/stdout; echo $? >" + quote((dir / "rc").string()) +
                            "; }" + redirect + quote((dir / "out").string());
    std::system(cmd.c_str());
    EXPECT_EQ(read_file(dir / "rc"), "0\n") << redirect;
    const std::string out = read_file(dir / "out");
    EXPECT_NE(out.find("iteration time"), std::string::npos) << redirect;
    EXPECT_NE(out.find("\"iteration_time_s\""), std::string::npos) << redirect;
    EXPECT_LT(out.find("iteration time"), out.find("\"iteration_time_s\"")) << redirect;
  }
}

TEST(Hostile, ADirectoryAsOutputIsBadInputAndStaysADirectory) {
  const TempDir dir;
  fs::create_directory(dir / "d");
  const Outcome o = run_cli({"run", kLlama, "--json", (dir / "d").string()}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("is a directory"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::is_directory(dir / "d"));
}

TEST(Hostile, AFailedWriteToStdoutIsExitOne) {
  // The summary to a full disk used to exit 0.
  const std::string cmd = quote(kBinary) + " run " + quote(kLlama) + " >/dev/full 2>/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// Starts a run writing a large trace, sends `sig` as soon as its temporary file appears, and
// returns the exit code (128 + signal for a signal death).
int interrupt_while_writing_trace(const TempDir& dir, int sig) {
  const std::string trace = (dir / "t.json").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::execl(kBinary.c_str(), kBinary.c_str(), "run",
            (kScenarios + "/llama2-7b-pcie-tp4.yaml").c_str(), "--set", "simulation.iterations=4",
            "--trace", trace.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    for (const auto& name : dir.entries())
      seen = seen || name.starts_with(".t.json.tmp.");
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(seen) << "the run finished or stalled before writing the trace";
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(Hostile, AnInterruptWhileWritingTheTraceRemovesItsTemporaryFile) {
  // It used to leave a temporary file of hundreds of MB.
  for (const auto& [sig, code] : {std::pair{SIGINT, 130}, {SIGTERM, 143}}) {
    const TempDir dir;
    EXPECT_EQ(interrupt_while_writing_trace(dir, sig), code);
    EXPECT_TRUE(dir.entries().empty())
        << "left: " << (dir.entries().empty() ? "" : dir.entries()[0]);
  }
}

}  // namespace
}  // namespace clustersim::cli::testing
