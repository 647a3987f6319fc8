// `clustersim calibrate --backend` and the back-end executables (docs/calibration.md "Backends"):
// clustersim loads no GPU or MPI library, so it replaces itself with clustersim-calibrate-<backend>
// found beside it (or in $CLUSTERSIM_BACKEND_DIR); a missing one is exit 2 saying what to install.
// Also the footprint of `clustersim --version` (docs/performance.md).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "calibrate/profile.hpp"
#include "cli/calibrate_backend.hpp"
#include "cli_harness.hpp"
#include "engine/sanitizer.hpp"
#include "models/gemm_shapes.hpp"

namespace clustersim::cli::testing {
namespace {

// Sets an environment variable for one test; `clustersim`, started by std::system, inherits it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliCalibrate, MissingBackendIsExitTwoSayingWhatToInstall) {
  const TempDir dir;
  fs::create_directory(dir / "empty");
  const ScopedEnv env("CLUSTERSIM_BACKEND_DIR", (dir / "empty").string());
  Outcome o = run_cli({"calibrate", "--backend", "cuda", "--quick", "--out", "p.json"}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "clustersim-calibrate-cuda not found in CLUSTERSIM_BACKEND_DIR=" +
                                  (dir / "empty").string() +
                                  ": this build has no CUDA back end; install CUDA 13 + NCCL and "
                                  "rebuild with -DCLUSTERSIM_WITH_CUDA=ON"))
      << o.err;
  o = run_cli({"calibrate", "--backend", "mpi", "--out", "p.json"}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "clustersim-calibrate-mpi not found in CLUSTERSIM_BACKEND_DIR="))
      << o.err;
  EXPECT_TRUE(contains(o.err, "-DCLUSTERSIM_WITH_MPI=ON")) << o.err;
  EXPECT_FALSE(fs::exists(dir / "p.json"));
}

TEST(CliCalibrate, BackendIsLookedUpBesideTheRunningBinary) {
  // A copy of clustersim alone in a directory: no back end beside it.
  const TempDir dir;
  fs::create_directory(dir / "bin");
  const fs::path lone = dir / "bin" / "clustersim";
  std::error_code ec;
  fs::create_hard_link(kBinary, lone, ec);
  if (ec) fs::copy_file(kBinary, lone);
  const std::string cmd = quote(lone.string()) +
                          " calibrate --backend cuda --out p.json >/dev/null 2>" +
                          quote((dir / "err").string());
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_TRUE(contains(read_file(dir / "err"), "clustersim-calibrate-cuda not found beside " +
                                                   lone.string() +
                                                   ": this build has no CUDA back end"))
      << read_file(dir / "err");
}

TEST(CliCalibrate, ReplacesItselfWithTheBackendPassingTheArguments) {
  const TempDir dir;
  fs::create_directory(dir / "backends");
  // A stand-in back end that reports its arguments and its parent process, and exits 7.
  const fs::path fake = dir.write("backends/clustersim-calibrate-mpi",
                                  "#!/bin/sh\n"
                                  "echo \"program: $0\"\n"
                                  "echo \"arguments: $*\"\n"
                                  "echo \"parent: $(cat /proc/$PPID/comm)\"\n"
                                  "exit 7\n");
  fs::permissions(fake, fs::perms::owner_all);
  const ScopedEnv env("CLUSTERSIM_BACKEND_DIR", (dir / "backends").string());
  // The output's folder must exist: it is checked before measuring, not after.
  fs::create_directory(dir / "out dir");
  const std::string out = (dir / "out dir" / "p.json").string();
  const Outcome o = run_cli({"calibrate", "--backend", "mpi", "--quick", "--out", out}, dir);
  EXPECT_EQ(o.code, 7) << o.err;  // the back end's own exit code
  EXPECT_TRUE(contains(o.out, "program: " + fake.string() + "\n")) << o.out;
  EXPECT_TRUE(contains(o.out, "arguments: --quick --out " + out + "\n")) << o.out;
  // exec, not a child process: the back end's parent is whoever started clustersim.
  EXPECT_TRUE(contains(o.out, "parent: ")) << o.out;
  EXPECT_FALSE(contains(o.out, "parent: clustersim")) << o.out;

  // Bad flags are refused before any back end is looked for.
  const Outcome bad = run_cli({"calibrate", "--backend", "mpi"}, dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, "--out PROFILE is required")) << bad.err;
  EXPECT_FALSE(contains(bad.out, "program:")) << bad.out;
}

TEST(CliCalibrate, ShapesFromPassesTheScenarioToTheCudaBackendAfterCheckingIt) {
  const TempDir dir;
  fs::create_directory(dir / "backends");
  const fs::path fake = dir.write("backends/clustersim-calibrate-cuda",
                                  "#!/bin/sh\necho \"arguments: $*\"\nexit 0\n");
  fs::permissions(fake, fs::perms::owner_all);
  const ScopedEnv env("CLUSTERSIM_BACKEND_DIR", (dir / "backends").string());
  const std::string scenario = std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-tp4.yaml";
  Outcome o = run_cli(
      {"calibrate", "--backend", "cuda", "--out", "p.json", "--shapes-from", scenario}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "arguments: --out p.json --shapes-from " + scenario + "\n")) << o.out;
  EXPECT_TRUE(contains(o.out, "GEMM shapes of " + scenario)) << o.out;
  // A scenario that does not load is refused with its file, line and key, before the back end.
  const fs::path bad = dir.write("bad.yaml",
                                 "cluster: {nodes: 1, node: dgx-a100}\nmodel: llama2-7b\n"
                                 "training: {global_batch: 3, micro_batch: 2}\n");
  o = run_cli({"calibrate", "--backend", "cuda", "--out", "p.json", "--shapes-from", bad.string()},
              dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, bad.string() + ":3:")) << o.err;
  EXPECT_TRUE(contains(o.err, "training.global_batch")) << o.err;
  EXPECT_FALSE(contains(o.out, "arguments:")) << o.out;
  // Only the CUDA back end measures GEMMs; the profile may not overwrite the scenario.
  o = run_cli({"calibrate", "--backend", "mpi", "--out", "p.json", "--shapes-from", scenario}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, "only --backend cuda")) << o.err;
  o = run_cli(
      {"calibrate", "--backend", "cuda", "--out", bad.string(), "--shapes-from", bad.string()},
      dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_FALSE(contains(o.out, "arguments:")) << o.out;
}

TEST(CliCalibrate, ScenarioGemmRequestsAreTheScenariosLargestShapes) {
  const auto all = models::scenario_gemm_shapes(
      models::load_scenario(std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-tp4.yaml"));
  const auto requests =
      scenario_gemm_requests({std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-tp4.yaml"});
  ASSERT_EQ(requests.size(), std::min(all.size(), kMaxScenarioGemms));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].m, all[i].m);
    EXPECT_EQ(requests[i].batch, all[i].batch);
    EXPECT_EQ(requests[i].dtype, all[i].dtype);
    EXPECT_EQ(requests[i].trans_b, all[i].trans_b);
  }
  EXPECT_TRUE(scenario_gemm_requests({}).empty());
}

// Shapes two scenarios share are measured once; the rest keep each scenario's order.
TEST(CliCalibrate, ShapesOfSeveralScenariosAreTheirUnionInOrder) {
  const std::string a = std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-tp4.yaml";
  const std::string b = std::string(CLUSTERSIM_SCENARIOS_DIR) + "/gpt3-175b-1024xA100.yaml";
  const auto only_a = scenario_gemm_requests({a});
  const auto only_b = scenario_gemm_requests({b});
  const auto same = [](const calibrate::GemmRequest& x, const calibrate::GemmRequest& y) {
    return x.m == y.m && x.n == y.n && x.k == y.k && x.batch == y.batch && x.dtype == y.dtype &&
           x.trans_a == y.trans_a && x.trans_b == y.trans_b;
  };
  std::vector<calibrate::GemmRequest> expected = only_a;
  for (const auto& r : only_b)
    if (std::none_of(only_a.begin(), only_a.end(), [&](const auto& x) { return same(x, r); }))
      expected.push_back(r);
  const auto both = scenario_gemm_requests({a, b, a});
  ASSERT_EQ(both.size(), expected.size());
  ASSERT_GT(expected.size(), only_a.size());  // the two models share no hidden size
  for (std::size_t i = 0; i < both.size(); ++i)
    EXPECT_TRUE(same(both[i], expected[i])) << i;
}

TEST(CliCalibrate, CudaBackendWithoutAGpuIsAClearErrorAndWritesNothing) {
  if (!fs::exists(fs::path(kBinary).parent_path() / "clustersim-calibrate-cuda"))
    GTEST_SKIP() << "this build has no CUDA back end";
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  const TempDir dir;
  const Outcome o = run_cli({"calibrate", "--backend", "cuda", "--quick", "--out", "p.json"}, dir);
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "the cuda backend found no usable GPU")) << o.err;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});
}

// A profile of one bf16 8192³ GEMM in 2 ms: 2·8192³ / 2 ms = 549.8 TFLOP/s, 0.556 of the
// H200's 989 TFLOP/s.
fs::path write_gemm_profile(const TempDir& dir, bool with_gemm) {
  calibrate::Profile p;
  p.provenance.host = "node01";
  p.provenance.gpu = "NVIDIA H200";
  p.provenance.date = "2026-12-04T12:00:00Z";
  p.provenance.backend = "cuda";
  p.provenance.ranks = 1;
  if (with_gemm) p.measurements.gemms.push_back({8192, 8192, 8192, "bf16", 2e-3});
  p.measurements.copies.push_back({"d2d", 1 << 30, 5e-4});
  const fs::path path = dir / (with_gemm ? "p.json" : "empty.json");
  calibrate::write_profile(p, path.string());
  return path;
}

TEST(CliCalibrate, GemmReportComparesEachMeasuredGemmWithThePreset) {
  const TempDir dir;
  const fs::path profile = write_gemm_profile(dir, true);
  Outcome o =
      run_cli({"calibrate", "gemm-report", profile.string(), "--gpu", "H200-SXM-141GB"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "549.8 0.556")) << o.out;
  EXPECT_TRUE(contains(o.out, "bf16    1 shapes: median |error|")) << o.out;
  o = run_cli({"calibrate", "gemm-report", profile.string(), "--gpu", "H300"}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, "unknown GPU preset 'H300'")) << o.err;
  o = run_cli({"calibrate", "gemm-report", write_gemm_profile(dir, false).string(), "--gpu",
               "H200-SXM-141GB"},
              dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, "empty.json: measurements.gemms is empty")) << o.err;
}

constexpr bool kSanitized = clustersim::engine::kAddressSanitizer;

// Runs `clustersim --version` once; its wall time in seconds and peak RSS in KiB (wait4).
std::pair<double, long> version_footprint() {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::execl(kBinary.c_str(), kBinary.c_str(), "--version", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return {dt.count(), usage.ru_maxrss};
}

// Start-up cost is measured by the benchmark BM_VersionStartup (bench/bench_startup.cpp), not by
// a timed test; the peak RSS of the process is a deterministic figure and is checked here.
TEST(CliVersion, PeaksUnder30MbOfMemory) {
  if (kSanitized) GTEST_SKIP() << "sanitizer runtimes add their own memory";
  const auto [seconds, kib] = version_footprint();
  EXPECT_LT(kib, 30 * 1024) << "clustersim --version peaked at " << kib << " KiB";
}

}  // namespace
}  // namespace clustersim::cli::testing
