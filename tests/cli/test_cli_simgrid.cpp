// `clustersim run --network simgrid` end to end: one process per run, as SimGrid needs.
#include <gtest/gtest.h>

#ifdef CLUSTERSIM_HAVE_SIMGRID

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

using json = nlohmann::json;

const std::string kResnet = kScenarios + "/resnet50-ddp-dgx-a100.yaml";

json run_json(const TempDir& dir, const std::string& network, const std::string& name) {
  const auto path = (dir / name).string();
  const Outcome o =
      run_cli({"run", kResnet, "--network", network, "--reproducible", "--json", path}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  return json::parse(read_file(path));
}

TEST(CliSimgrid, RunsAScenarioDeterministicallyAndAgreesWithFlow) {
  // ResNet-50 DDP on one DGX A100: 25 MB bucket all-reduces over NVSwitch, uncontended, where the
  // two models must agree (docs/simgrid.md); the same run twice is the same JSON.
  const TempDir dir;
  const json a = run_json(dir, "simgrid", "a.json");
  const json b = run_json(dir, "simgrid", "b.json");
  const json flow = run_json(dir, "flow", "flow.json");
  EXPECT_EQ(a["network_model"], "simgrid");
  EXPECT_EQ(a.dump(), b.dump());
  const double t = a["iteration_time_s"].get<double>();
  const double want = flow["iteration_time_s"].get<double>();
  EXPECT_NEAR(t, want, 0.03 * want);
}

// The result JSON's scalars as "a.b" keys without the wall time: a sweep row (docs/sweeps.md).
void flatten_cli_simgrid(const json& j, const std::string& prefix, json& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      flatten_cli_simgrid(value, path, out);
    else if (!value.is_array() && path != "simulator.wall_s")
      out[path] = value;
  }
}

TEST(CliSimgrid, ASweepRunsEverySimgridPointAsItsOwnRunWould) {
  // Each simgrid point runs in a child process of the sweep's (SimGrid starts once per process):
  // its row is the `clustersim run --network simgrid --reproducible` result of that point, key for
  // key and digit for digit.
  const TempDir dir;
  const auto sweep = (dir / "sweep.json").string();
  const Outcome o = run_cli({"sweep", kResnet, "--vary", "parallel.bucket_mb=5,100", "--network",
                             "simgrid", "--jobs", "2", "--json", sweep},
                            dir);
  ASSERT_EQ(o.code, 0) << o.err;
  const json rows = json::parse(read_file(sweep))["rows"];
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<std::string> buckets{"5", "100"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i]["status"], "ok") << rows[i]["reason"];
    const auto path = (dir / ("run" + buckets[i] + ".json")).string();
    const Outcome run = run_cli({"run", kResnet, "--set", "parallel.bucket_mb=" + buckets[i],
                                 "--network", "simgrid", "--reproducible", "--json", path},
                                dir);
    ASSERT_EQ(run.code, 0) << run.err;
    json flat = json::object();
    flatten_cli_simgrid(json::parse(read_file(path)), "", flat);
    EXPECT_EQ(rows[i]["result"].dump(), flat.dump()) << "point " << i;
  }
}

// Each "util LINK" counter of a trace: (time µs, utilization) sorted by time.
std::map<std::string, std::vector<std::pair<double, double>>> link_counters(
    const std::string& path) {
  std::map<std::string, std::vector<std::pair<double, double>>> tracks;
  const json trace = json::parse(read_file(path));
  for (const json& e : trace["traceEvents"])
    if (e.value("ph", "") == "C" && e.value("name", "").starts_with("util "))
      tracks[e["name"]].emplace_back(e["ts"].get<double>(), e["args"]["utilization"].get<double>());
  for (auto& [name, points] : tracks)
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
  return tracks;
}

TEST(CliSimgrid, ATraceHasLinkUtilizationCountersCarryingWhatFlowCarries) {
  // ResNet-50's bucket all-reduces over NVSwitch: every NVLink of the ring runs at its full
  // (derated) bandwidth while a step's message crosses it and is idle at the end; integrated over
  // time, a counter is the link's bytes over its bandwidth, the same bytes the flow model moves.
  const TempDir dir;
  std::map<std::string, std::map<std::string, std::vector<std::pair<double, double>>>> by_model;
  for (const std::string model : {"simgrid", "flow"}) {
    const auto trace = (dir / (model + ".json")).string();
    const Outcome o = run_cli({"run", kResnet, "--network", model, "--trace", trace}, dir);
    ASSERT_EQ(o.code, 0) << o.err;
    by_model[model] = link_counters(trace);
  }
  const auto& tracks = by_model["simgrid"];
  ASSERT_FALSE(tracks.empty()) << "no link counters in the simgrid trace";
  for (const auto& [name, points] : tracks) {
    double peak = 0.0, busy = 0.0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      EXPECT_GE(points[i].second, 0.0) << name;
      EXPECT_LE(points[i].second, 1.0 + 1e-9) << name;
      peak = std::max(peak, points[i].second);
      if (i + 1 < points.size()) busy += (points[i + 1].first - points[i].first) * points[i].second;
    }
    EXPECT_NEAR(peak, 1.0, 0.03) << name;
    EXPECT_EQ(points.back().second, 0.0) << name << " is still busy at the end";
    ASSERT_TRUE(by_model["flow"].contains(name)) << name;
    const auto& flow = by_model["flow"].at(name);
    double flow_busy = 0.0;
    for (std::size_t i = 0; i + 1 < flow.size(); ++i)
      flow_busy += (flow[i + 1].first - flow[i].first) * flow[i].second;
    EXPECT_NEAR(busy, flow_busy, 0.03 * flow_busy) << name;
  }
}

TEST(CliSimgrid, ABadSimgridKeyIsBadInput) {
  const TempDir dir;
  const Outcome o = run_cli(
      {"run", kResnet, "--set", "simulation.simgrid.model=NS3", "--network", "simgrid"}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("simulation.simgrid.model"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace clustersim::cli::testing

#endif  // CLUSTERSIM_HAVE_SIMGRID
