// Sweeps on the simgrid network model (docs/sweeps.md): SimGrid runs once per process, so each
// simgrid point runs in a forked child (models/sweep_process.hpp). Its row must be the row of the
// same point run alone, and a child that dies must become a failed row, never a hang.
#include <gtest/gtest.h>

#ifdef CLUSTERSIM_HAVE_SIMGRID

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/frontend.hpp"
#include "models/result_json.hpp"
#include "models/sweep.hpp"
#include "models/sweep_process.hpp"

namespace clustersim::models {
namespace {

const std::string kSimgridSweepResnet =
    std::string(CLUSTERSIM_SCENARIOS_DIR) + "/resnet50-ddp-dgx-a100.yaml";

// The result JSON's scalars as "a.b" keys without the wall time, as docs/sweeps.md defines a row.
void flatten_for_simgrid_sweep(const nlohmann::ordered_json& json, const std::string& prefix,
                               nlohmann::ordered_json& out) {
  for (const auto& [key, value] : json.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      flatten_for_simgrid_sweep(value, path, out);
    else if (!value.is_array() && path != "simulator.wall_s")
      out[path] = value;
  }
}

// `clustersim run FILE --set OVERRIDE --network simgrid --reproducible`'s result, flattened: the
// front-end API in a forked child of the test's own (SimGrid once per process).
nlohmann::ordered_json separate_simgrid_run(const std::string& override_text) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      RunRequest run;
      run.scenario = kSimgridSweepResnet;
      run.overrides = {override_text};
      run.network = "simgrid";
      out = result_to_json(predict(run).output.result, /*reproducible=*/true).dump();
    } catch (const std::exception& e) {
      out = std::string("error: ") + e.what();
    }
    const ssize_t ignored = ::write(fds[1], out.data(), out.size());
    (void)ignored;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.starts_with("error: "))
    throw std::runtime_error("the separate simgrid run failed: " + text);
  nlohmann::ordered_json flat = nlohmann::ordered_json::object();
  flatten_for_simgrid_sweep(nlohmann::ordered_json::parse(text), "", flat);
  return flat;
}

TEST(SimgridSweep, EachPointRunsInAChildAndEqualsItsSeparateRun) {
  // ResNet-50 DDP on a DGX A100 with three bucket sizes, two children at a time.
  SweepRequest request;
  request.base.scenario = kSimgridSweepResnet;
  request.base.network = "simgrid";
  request.axes = {{"parallel.bucket_mb", {"5", "25", "100"}}};
  request.jobs = 2;
  const SweepResult r = run_sweep(request);
  ASSERT_EQ(r.rows.size(), 3u);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const SweepRow& row = r.rows[i];
    EXPECT_EQ(row.index, i);
    ASSERT_EQ(row.status, SweepStatus::ok) << row.reason;
    EXPECT_EQ(row.result["network_model"], "simgrid");
    const nlohmann::ordered_json alone =
        separate_simgrid_run("parallel.bucket_mb=" + request.axes[0].values[i]);
    // Byte-identical: every key, every digit.
    EXPECT_EQ(row.result.dump(), alone.dump()) << "point " << i;
  }
  // Different bucket counts give different schedules: the points are not one result copied.
  EXPECT_NE(r.rows[0].result["iteration_time_s"], r.rows[2].result["iteration_time_s"]);
}

TEST(SimgridSweep, TheNetworkModelMayBeAnAxis) {
  // flow runs in the sweep's own process, simgrid in a child: both rows are ok and, for this
  // uncontended all-reduce traffic, within the 3 % the simgrid tests allow (docs/network.md).
  SweepRequest request;
  request.base.scenario = kSimgridSweepResnet;
  request.axes = {{"simulation.network_model", {"flow", "simgrid"}}};
  request.jobs = 2;
  const SweepResult r = run_sweep(request);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const SweepRow& row : r.rows)
    ASSERT_EQ(row.status, SweepStatus::ok) << row.reason;
  EXPECT_EQ(r.rows[1].result["network_model"], "simgrid");
  const double flow = r.rows[0].result["iteration_time_s"].get<double>();
  EXPECT_NEAR(r.rows[1].result["iteration_time_s"].get<double>(), flow, 0.03 * flow);
}

TEST(SimgridSweep, AChildThatFailsToLoadSimgridGivesAFailedRowWithTheReason) {
  // A file that is not the plugin: each child's SimGrid cannot load, the point fails, the sweep
  // goes on with the next one.
  ASSERT_EQ(setenv("CLUSTERSIM_SIMGRID_PLUGIN",
                   CLUSTERSIM_SCENARIOS_DIR "/resnet50-ddp-dgx-a100.yaml", 1),
            0);
  SweepRequest request;
  request.base.scenario = kSimgridSweepResnet;
  request.base.network = "simgrid";
  request.axes = {{"parallel.bucket_mb", {"5", "25"}}};
  request.jobs = 2;
  const SweepResult r = run_sweep(request);
  unsetenv("CLUSTERSIM_SIMGRID_PLUGIN");
  ASSERT_EQ(r.rows.size(), 2u);
  for (const SweepRow& row : r.rows) {
    EXPECT_EQ(row.status, SweepStatus::failed);
    EXPECT_NE(row.reason.find("cannot load the simgrid network model"), std::string::npos)
        << row.reason;
  }
  EXPECT_TRUE(r.best.empty());
}

SweepPoint simgrid_sweep_point() {
  return SweepPoint{4, {"x"}, true};
}

TEST(SimgridSweep, AChildKilledByASignalIsAFailedRowNamingTheSignal) {
  const SweepRow row = run_row_in_child_process(simgrid_sweep_point(), []() -> SweepRow {
    std::raise(SIGKILL);
    return {};
  });
  EXPECT_EQ(row.index, 4u);
  EXPECT_EQ(row.values, std::vector<std::string>{"x"});
  EXPECT_EQ(row.status, SweepStatus::failed);
  EXPECT_NE(row.reason.find("killed by signal " + std::to_string(SIGKILL) + " (SIGKILL"),
            std::string::npos)
      << row.reason;
  EXPECT_NE(row.reason.find("without a result"), std::string::npos) << row.reason;
}

TEST(SimgridSweep, AChildExitingNonZeroOrSendingGarbageIsAFailedRow) {
  SweepRow row = run_row_in_child_process(simgrid_sweep_point(), []() -> SweepRow { _exit(7); });
  EXPECT_EQ(row.status, SweepStatus::failed);
  EXPECT_NE(row.reason.find("exited with status 7"), std::string::npos) << row.reason;
  // Another point's row is not taken for this one's.
  row = run_row_in_child_process(simgrid_sweep_point(), [] {
    return SweepRow{5, {"y"}, SweepStatus::ok, {}, nlohmann::ordered_json::object()};
  });
  EXPECT_EQ(row.status, SweepStatus::failed);
  EXPECT_NE(row.reason.find("another point"), std::string::npos) << row.reason;
  // An exception in the child is the point's failure, with its message.
  row = run_row_in_child_process(simgrid_sweep_point(),
                                 []() -> SweepRow { throw std::runtime_error("boom"); });
  EXPECT_EQ(row.status, SweepStatus::failed);
  EXPECT_EQ(row.reason, "boom");
}

TEST(SimgridSweep, ARowComesBackExactly) {
  // 0.1 + 0.2 has 17 significant digits: the pipe's JSON keeps every bit.
  const double awkward = 0.1 + 0.2;
  const SweepRow row = run_row_in_child_process(simgrid_sweep_point(), [awkward] {
    return SweepRow{4, {"x"}, SweepStatus::ok, {}, {{"iteration_time_s", awkward}, {"n", 3}}};
  });
  ASSERT_EQ(row.status, SweepStatus::ok) << row.reason;
  EXPECT_EQ(row.result["iteration_time_s"].get<double>(), awkward);
  EXPECT_EQ(row.result["n"].get<int>(), 3);
}

TEST(SimgridSweep, CancellingKillsAChildThatWouldNeverEnd) {
  std::atomic<bool> cancel{true};
  const SweepRow row = run_row_in_child_process(
      simgrid_sweep_point(),
      []() -> SweepRow {
        while (true)
          pause();
      },
      &cancel);
  EXPECT_EQ(row.status, SweepStatus::failed);
  EXPECT_EQ(row.reason, "cancelled");
}

}  // namespace
}  // namespace clustersim::models

#endif  // CLUSTERSIM_HAVE_SIMGRID
