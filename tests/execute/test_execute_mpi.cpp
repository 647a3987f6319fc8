// `clustersim execute --backend mpi` under mpirun on loopback (docs/execution.md): tiny DDP,
// 2-stage pipeline and TP 2 scenarios on the `cpu` preset run every op once with checked data;
// compare's table adds up; a launch or schedule that does not match, a skipped op and a killed rank
// end the job with a clear error within the timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "../cli/cli_harness.hpp"
#include "models/frontend.hpp"

namespace clustersim::cli::testing {
namespace {

using nlohmann::json;

const std::string kMpirun = CLUSTERSIM_MPIRUN;
const std::string kData = std::string(CLUSTERSIM_TEST_DATA) + "/execution/";
// What most of these tests check (every op once, checked data, the watchdog) does not depend on
// how long compute takes: a twentieth of the work keeps them fast in the sanitizer (Debug) build,
// where Eigen is tens of times slower, and keeps ranks from drifting apart by a whole timeout.
const std::string kLightWork = "0.05";

struct Timed {
  Outcome outcome;
  double seconds = 0;
};

// `env` is put in front of mpirun and exported to the ranks (-x).
Timed mpirun(int np, const std::vector<std::string>& args, const TempDir& dir,
             const std::string& env = "") {
  std::string cmd = env.empty() ? "" : env + " ";
  // Under the sanitizer build (.ci/run) Open MPI's own allocations, never freed at MPI_Finalize,
  // would fail every rank's exit code: leak checking stays on for everything but the ranks.
  const char* asan = std::getenv("ASAN_OPTIONS");
  if (asan != nullptr) cmd += "ASAN_OPTIONS=" + quote(std::string(asan) + ":detect_leaks=0") + " ";
  cmd += kMpirun;
  if (!env.empty()) cmd += " -x " + env.substr(0, env.find('='));
  if (asan != nullptr) cmd += " -x ASAN_OPTIONS";
  cmd += " -np " + std::to_string(np) + " " + quote(kBinary);
  for (const auto& a : args)
    cmd += " " + quote(a);
  const auto began = std::chrono::steady_clock::now();
  Timed t;
  const int status = std::system((cmd + " >" + quote((dir / ".out").string()) + " 2>" +
                                  quote((dir / ".err").string()) + " </dev/null")
                                     .c_str());
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  t.outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  t.outcome.out = read_file(dir / ".out");
  t.outcome.err = read_file(dir / ".err");
  return t;
}

json read_json(const fs::path& p) {
  return json::parse(read_file(p));
}

engine::Schedule schedule_of(const std::string& scenario) {
  models::RunRequest r;
  r.scenario = scenario;
  r.every_rank = true;  // what the executor replays
  return models::predict(r).output.built.schedule;
}

// Values the executor must have checked in one run, worked out from the schedule: an all-reduce
// checks its whole buffer (bytes / 4 floats, rounded down to a multiple of the group size) on
// every member, a recv its whole buffer.
std::uint64_t expected_checks(const engine::Schedule& s) {
  std::uint64_t n = 0;
  for (const engine::Op& op : s.ops) {
    const std::uint64_t floats = std::max<std::uint64_t>(op.bytes / 4, 1);
    if (op.kind == engine::OpKind::recv) n += floats;
    if (op.kind == engine::OpKind::collective) {
      EXPECT_EQ(op.collective, engine::CollectiveType::all_reduce) << "extend expected_checks";
      const std::uint64_t members = s.groups[op.group_or_peer].ranks.size();
      n += std::max(floats - floats % members, members);
    }
  }
  return n;
}

void execute_and_check(const std::string& name, int np) {
  TempDir dir;
  const std::string scenario = kData + name + ".yaml";
  const Timed t =
      mpirun(np,
             {"execute", scenario, "--backend", "mpi", "--iterations", "1", "--warmup", "0",
              "--work-scale", kLightWork, "--op-timeout", "60", "--json",
              (dir / "measured.json").string(), "--trace", (dir / "trace.json").string()},
             dir);
  ASSERT_EQ(t.outcome.code, 0) << t.outcome.out << t.outcome.err;
  const engine::Schedule s = schedule_of(scenario);
  const json m = read_json(dir / "measured.json");
  EXPECT_EQ(m.at("world_size").get<std::uint32_t>(), s.num_ranks);
  EXPECT_EQ(m.at("execution").at("ranks").get<int>(), np);
  EXPECT_EQ(m.at("execution").at("values_wrong").get<std::uint64_t>(), 0u);
  EXPECT_EQ(m.at("execution").at("values_checked").get<std::uint64_t>(), expected_checks(s));

  // Every op of the schedule once, on its rank, with an interval.
  const json& ops = m.at("ops");
  ASSERT_EQ(ops.size(), s.ops.size());
  std::vector<int> seen(s.ops.size(), 0);
  for (const json& op : ops) {
    const auto id = op.at("id").get<std::size_t>();
    ASSERT_LT(id, s.ops.size());
    ++seen[id];
    EXPECT_EQ(op.at("rank").get<engine::Rank>(), s.ops[id].rank);
    EXPECT_EQ(op.at("label").get<std::string>(), s.label(s.ops[id]));
    EXPECT_LE(op.at("start_s").get<double>(), op.at("end_s").get<double>()) << id;
    if (s.ops[id].kind == engine::OpKind::compute && s.flops(s.ops[id]) > 0) {
      EXPECT_GT(op.at("end_s").get<double>(), op.at("start_s").get<double>()) << id;
    }
  }
  for (std::size_t id = 0; id < seen.size(); ++id)
    EXPECT_EQ(seen[id], 1) << "op " << id;
  // A blocking exchange cannot end on one side before the other side began it: each recv ends
  // after its send started (clocks aligned to rank 0).
  for (std::size_t id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.kind != engine::OpKind::recv) continue;
    for (std::size_t j = 0; j < s.ops.size(); ++j)
      if (s.ops[j].kind == engine::OpKind::send && s.ops[j].rank == op.group_or_peer &&
          s.ops[j].group_or_peer == op.rank && s.ops[j].tag() == op.tag()) {
        EXPECT_GE(ops[id].at("end_s").get<double>() + 1e-4, ops[j].at("start_s").get<double>());
      }
  }
  // The measured result is the result schema: its breakdown adds up to its iteration time.
  double sum = 0;
  for (const auto& [k, v] : m.at("breakdown_s").items())
    sum += v.get<double>();
  EXPECT_NEAR(sum, m.at("iteration_time_s").get<double>(),
              1e-6 * m.at("iteration_time_s").get<double>());
  // The trace has the simulated trace's lanes: a process per rank.
  const json trace = read_json(dir / "trace.json");
  int complete = 0;
  for (const json& e : trace.at("traceEvents"))
    complete += e.at("ph") == "X" && e.at("pid").get<std::uint32_t>() < s.num_ranks ? 1 : 0;
  EXPECT_EQ(complete, static_cast<int>(s.ops.size()));

  // compare: its iteration error is the difference of the two files' figures, and the category
  // errors add up to it.
  const Outcome run = run_cli({"run", scenario, "--json", (dir / "predicted.json").string()}, dir);
  ASSERT_EQ(run.code, 0) << run.err;
  const Outcome cmp =
      run_cli({"compare", (dir / "predicted.json").string(), (dir / "measured.json").string(),
               "--json", (dir / "cmp.json").string(), "--trace", (dir / "merged.json").string()},
              dir);
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  const json p = read_json(dir / "predicted.json");
  const json c = read_json(dir / "cmp.json");
  const double error =
      p.at("iteration_time_s").get<double>() - m.at("iteration_time_s").get<double>();
  EXPECT_NEAR(c.at("iteration_time").at("error_s").get<double>(), error, 1e-12);
  double category_errors = 0;
  for (const auto& [k, v] : c.at("categories").items())
    category_errors += v.at("error_s").get<double>();
  EXPECT_NEAR(category_errors, error, 1e-6 * std::abs(error) + 1e-12);
  EXPECT_NE(cmp.out.find("largest per-op errors"), std::string::npos);
}

TEST(ExecuteMpi, TinyDdpOnTwoRanks) {
  execute_and_check("ddp2", 2);
}
TEST(ExecuteMpi, TinyDdpOnFourRanks) {
  execute_and_check("ddp4", 4);
}
TEST(ExecuteMpi, TwoStagePipeline) {
  execute_and_check("pp2", 2);
}
TEST(ExecuteMpi, TensorParallelTwo) {
  execute_and_check("tp2", 2);
}

TEST(ExecuteMpi, ALaunchThatDoesNotMatchTheClusterIsBadInput) {
  TempDir dir;
  const Timed t = mpirun(3, {"execute", kData + "ddp2.yaml", "--backend", "mpi"}, dir);
  EXPECT_EQ(t.outcome.code, 2);
  EXPECT_NE(t.outcome.err.find("has 2 ranks (1 node(s) x 2 GPUs per node) but mpirun started 3"),
            std::string::npos)
      << t.outcome.err;
}

TEST(ExecuteMpi, RanksWithDifferentSchedulesAreRefusedBeforeRunning) {
  TempDir dir;
  // MPMD: rank 1 is given other gradient buckets than rank 0.
  const Timed t = mpirun(
      1,
      {"execute", kData + "ddp2.yaml", "--backend", "mpi", ":", "-np", "1", kBinary, "execute",
       kData + "ddp2.yaml", "--backend", "mpi", "--set", "parallel.bucket_mb=0.5"},
      dir);
  EXPECT_EQ(t.outcome.code, 2);
  EXPECT_NE(t.outcome.err.find("rank 1 built a different schedule than rank 0"), std::string::npos)
      << t.outcome.err;
}

// The last collective of `rank` in the schedule.
engine::OpId last_collective(const engine::Schedule& s, engine::Rank rank) {
  engine::OpId last = engine::kNone;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == rank && s.ops[id].kind == engine::OpKind::collective) last = id;
  return last;
}

TEST(ExecuteMpi, ASkippedCollectiveEndsTheJobWithinTheTimeoutNamingTheWaitingOp) {
  TempDir dir;
  const engine::Schedule s = schedule_of(kData + "ddp2.yaml");
  const engine::OpId skipped = last_collective(s, 1), waited = last_collective(s, 0);
  const double timeout = 2;
  const Timed t = mpirun(2,
                         {"execute", kData + "ddp2.yaml", "--backend", "mpi", "--iterations", "1",
                          "--warmup", "0", "--work-scale", kLightWork, "--op-timeout", "2"},
                         dir, "CLUSTERSIM_EXECUTE_FAULT=skip:1:" + std::to_string(skipped));
  EXPECT_NE(t.outcome.code, 0);
  EXPECT_LT(t.seconds, timeout + 20);
  EXPECT_NE(t.outcome.err.find("watchdog: rank 0 has waited"), std::string::npos) << t.outcome.err;
  EXPECT_NE(t.outcome.err.find("on op " + std::to_string(waited) + " '"), std::string::npos)
      << t.outcome.err;
}

TEST(ExecuteMpi, AKilledRankEndsTheJobWithinTheTimeout) {
  TempDir dir;
  const engine::Schedule s = schedule_of(kData + "ddp2.yaml");
  const Timed t =
      mpirun(2,
             {"execute", kData + "ddp2.yaml", "--backend", "mpi", "--iterations", "1", "--warmup",
              "0", "--work-scale", kLightWork, "--op-timeout", "2"},
             dir, "CLUSTERSIM_EXECUTE_FAULT=kill:1:" + std::to_string(last_collective(s, 1)));
  EXPECT_NE(t.outcome.code, 0);
  EXPECT_LT(t.seconds, 2 + 20);
  EXPECT_FALSE(fs::exists(dir / "measured.json"));
}

// calibrate --backend mpi -> run with that profile -> execute -> compare (docs/execution.md "The
// CPU loop"): the calibrated prediction is nearer the measurement than the `cpu` preset's.
TEST(ExecuteMpi, CpuLoopCalibratedPredictionIsCloserThanThePreset) {
  TempDir dir;
  const std::string scenario = kData + "ddp2.yaml";
  const std::string profile = (dir / "profile.json").string();
  const Timed cal = mpirun(2, {"calibrate", "--backend", "mpi", "--quick", "--out", profile}, dir);
  ASSERT_EQ(cal.outcome.code, 0) << cal.outcome.err;
  const std::string with_profile = "simulation.calibration=" + profile;
  ASSERT_EQ(run_cli({"run", scenario, "--json", (dir / "preset.json").string()}, dir).code, 0);
  const Outcome predicted = run_cli(
      {"run", scenario, "--set", with_profile, "--json", (dir / "predicted.json").string()}, dir);
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  const Timed exe =
      mpirun(2,
             {"execute", scenario, "--set", with_profile, "--backend", "mpi", "--iterations", "1",
              "--warmup", "1", "--json", (dir / "measured.json").string()},
             dir);
  ASSERT_EQ(exe.outcome.code, 0) << exe.outcome.err;
  const Outcome cmp =
      run_cli({"compare", (dir / "predicted.json").string(), (dir / "measured.json").string(),
               "--json", (dir / "cmp.json").string()},
              dir);
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  const json m = read_json(dir / "measured.json");
  const double measured = m.at("iteration_time_s").get<double>();
  const double calibrated = read_json(dir / "predicted.json").at("iteration_time_s").get<double>();
  const double preset = read_json(dir / "preset.json").at("iteration_time_s").get<double>();
  // The executor predicted with the same profile: the same figure as `run`.
  EXPECT_DOUBLE_EQ(m.at("execution").at("predicted_iteration_time_s").get<double>(), calibrated);
  EXPECT_LT(std::abs(calibrated - measured), std::abs(preset - measured));
  EXPECT_NEAR(read_json(dir / "cmp.json").at("iteration_time").at("relative_error").get<double>(),
              (calibrated - measured) / measured, 1e-9);
  // Feed back: a profile fitted to this execution, and a prediction that uses it.
  const std::string fed = (dir / "from-execution.json").string();
  const Outcome from =
      run_cli({"calibrate", "from-execution", (dir / "measured.json").string(), "--out", fed}, dir);
  ASSERT_EQ(from.code, 0) << from.err;
  EXPECT_NE(from.out.find("1 collective fits"), std::string::npos) << from.out;  // one all-reduce
  const Outcome again = run_cli({"run", scenario, "--set", "simulation.calibration=" + fed,
                                 "--json", (dir / "again.json").string()},
                                dir);
  ASSERT_EQ(again.code, 0) << again.err;
}

}  // namespace
}  // namespace clustersim::cli::testing
