// Every scenario under scenarios/ runs through the real binary and its result JSON has exactly
// DESIGN.md's keys (plus the documented extras, docs/outputs.md) and figures that agree with one
// another by their definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_harness.hpp"
#include "models/scenario.hpp"

namespace clustersim::cli::testing {
namespace {

using nlohmann::json;

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items())
    keys.insert(k);
  return keys;
}

// DESIGN.md "Result JSON", plus our extras: critical_rank, notes, workload, offload,
// memory.peak_rank, memory.host.
void expect_design_keys(const json& j) {
  EXPECT_EQ(keys_of(j),
            (std::set<std::string>{"scenario", "world_size", "iteration_time_s", "tokens_per_s",
                                   "samples_per_s", "tflops_per_gpu", "mfu", "bubble_fraction",
                                   "exposed_comm_s", "comm_overlap_fraction", "memory",
                                   "breakdown_s", "links", "network_model", "simulator",
                                   // extras
                                   "critical_rank", "notes", "workload", "offload"}));
  EXPECT_EQ(keys_of(j["exposed_comm_s"]),
            (std::set<std::string>{"dp", "tp", "pp", "ep", "cp", "total"}));
  EXPECT_EQ(
      keys_of(j["memory"]),
      (std::set<std::string>{"peak_bytes_per_gpu", "capacity_bytes", "fits", "breakdown",
                             // extras (docs/memory.md)
                             "peak_rank", "overheads", "allocated_bytes", "reserved_bytes", "phase",
                             "headroom_bytes", "verdict", "suggestions", "combined_suggestion",
                             "timeline", "host", "startup_peak_bytes"}));
  EXPECT_EQ(keys_of(j["memory"]["breakdown"]),
            (std::set<std::string>{"weights", "gradients", "optimizer", "activations", "buffers"}));
  EXPECT_EQ(keys_of(j["breakdown_s"]),
            (std::set<std::string>{"compute", "recompute", "dp_comm", "tp_comm", "pp_comm",
                                   "ep_comm", "cp_comm", "idle"}));
  EXPECT_EQ(keys_of(j["simulator"]), (std::set<std::string>{"events", "wall_s"}));
  ASSERT_TRUE(j["links"].is_array());
  for (const auto& link : j["links"])
    EXPECT_EQ(keys_of(link), (std::set<std::string>{"name", "kind", "bytes",
                                                    "bandwidth_bytes_per_s", "utilization"}));
  EXPECT_TRUE(j["notes"].is_array());
}

// Relations that hold by definition (docs/outputs.md), checked against the scenario as loaded.
void expect_consistent(const json& j, const models::Scenario& sc) {
  const double t = j["iteration_time_s"];
  ASSERT_GT(t, 0.0);
  const double rel = 1e-9;
  EXPECT_EQ(j["scenario"], sc.name);
  EXPECT_EQ(j["world_size"], sc.cluster.nodes * sc.cluster.topology.node.gpus);
  // samples/s = global batch / iteration time; tokens = samples × sequence length (a sample of a
  // layer-list model counts as one token).
  const double samples = j["samples_per_s"];
  EXPECT_NEAR(samples * t, static_cast<double>(sc.training.global_batch),
              rel * sc.training.global_batch);
  EXPECT_NEAR(j["tokens_per_s"].get<double>(), samples * std::max(1, sc.training.seq_len),
              rel * samples * std::max(1, sc.training.seq_len));
  // The critical rank's breakdown covers the iteration exactly once.
  const auto& b = j["breakdown_s"];
  double sum = 0;
  for (const auto& [k, v] : b.items()) {
    EXPECT_GE(v.get<double>(), 0.0) << k;
    sum += v.get<double>();
  }
  EXPECT_NEAR(sum, t, rel * t);
  // Exposed communication is the breakdown's communication; the bubble its idle share.
  const auto& e = j["exposed_comm_s"];
  EXPECT_EQ(e["dp"], b["dp_comm"]);
  EXPECT_EQ(e["tp"], b["tp_comm"]);
  EXPECT_EQ(e["pp"], b["pp_comm"]);
  EXPECT_EQ(e["ep"], b["ep_comm"]);
  EXPECT_EQ(e["cp"], b["cp_comm"]);
  EXPECT_NEAR(e["total"].get<double>(),
              e["dp"].get<double>() + e["tp"].get<double>() + e["pp"].get<double>() +
                  e["ep"].get<double>() + e["cp"].get<double>(),
              rel * t);
  EXPECT_NEAR(j["bubble_fraction"].get<double>(), b["idle"].get<double>() / t, rel);
  const double overlap = j["comm_overlap_fraction"];
  EXPECT_GE(overlap, 0.0);
  EXPECT_LE(overlap, 1.0);
  // MFU counts model FLOPs only, TFLOP/s all executed ones: mfu × peak ≤ TFLOP/s.
  const double mfu = j["mfu"];
  EXPECT_GT(mfu, 0.0);
  EXPECT_LE(mfu, 1.0);
  const double peak = sc.cluster.gpu.peak_flops[static_cast<std::size_t>(sc.training.precision)];
  EXPECT_LE(mfu * peak, j["tflops_per_gpu"].get<double>() * 1e12 * (1 + rel));
  // Memory: the peak is the sum of its terms and of the overheads but the fragmentation
  // allowance and start-up's cache (reserved, not needed), and fits means it and start-up's
  // peak are within capacity.
  const auto& m = j["memory"];
  double terms = 0;
  for (const auto& [k, v] : m["breakdown"].items())
    terms += v.get<double>();
  for (const auto& [k, v] : m["overheads"].items())
    if (k != "fragmentation" && k != "startup_cache") terms += v.get<double>();
  EXPECT_NEAR(m["peak_bytes_per_gpu"].get<double>(), terms, rel * terms);
  EXPECT_EQ(m["capacity_bytes"].get<double>(), sc.cluster.gpu.memory_bytes);
  EXPECT_EQ(m["fits"].get<bool>(),
            m["peak_bytes_per_gpu"].get<double>() <= m["capacity_bytes"].get<double>() &&
                m["startup_peak_bytes"].get<double>() <= m["capacity_bytes"].get<double>() &&
                m["host"]["fits"].get<bool>());
  EXPECT_EQ(m["host"]["fits"].get<bool>(),
            m["host"]["bytes_per_node"].get<double>() <= m["host"]["capacity_bytes"].get<double>());
  // Links: busiest first, utilization = bytes / (bandwidth × iteration time) within [0, 1].
  double previous = 2.0;
  for (const auto& link : j["links"]) {
    const double u = link["utilization"];
    EXPECT_LE(u, previous);
    EXPECT_GT(u, 0.0);
    EXPECT_LE(u, 1.0 + 1e-9);
    EXPECT_NEAR(u, link["bytes"].get<double>() / (link["bandwidth_bytes_per_s"].get<double>() * t),
                1e-9);
    previous = u;
  }
  EXPECT_GT(j["simulator"]["events"].get<double>(), 0.0);
  EXPECT_EQ(j["simulator"]["wall_s"], 0.0);  // --reproducible
}

// Regression pins (tests/data/pins/scenarios.json, written by scripts/update-pins.sh): a change
// that moves a shipped scenario's key figures must regenerate the file, so the diff shows in
// review.
void expect_pinned(const json& j, const std::string& scenario) {
  static const json pins =
      json::parse(read_file(std::string(CLUSTERSIM_TEST_DATA) + "/pins/scenarios.json"));
  ASSERT_TRUE(pins.contains(scenario))
      << scenario << " has no pin: run scripts/update-pins.sh and review the diff";
  const json& pin = pins[scenario];
  auto near = [&](const json& expected, const json& actual, const std::string& key) {
    const double e = expected.get<double>(), a = actual.get<double>();
    EXPECT_NEAR(a, e, 1e-6 * std::abs(e)) << scenario << ": " << key;
  };
  for (const char* key : {"iteration_time_s", "tflops_per_gpu", "bubble_fraction"})
    near(pin[key], j[key], key);
  for (const char* kind : {"dp", "tp", "pp", "ep"})
    near(pin["exposed_comm_s"][kind], j["exposed_comm_s"][kind], std::string("exposed ") + kind);
  near(pin["peak_bytes_per_gpu"], j["memory"]["peak_bytes_per_gpu"], "peak memory");
}

// Shipped scenarios too large for a test run (minutes and several GB: benchmarks in bench/,
// docs/performance.md) run here on fewer nodes, the same plan per pipeline with less data
// parallelism, and are not pinned (scripts/update-pins.sh skips them too).
const std::map<std::string, std::vector<std::string>>& benchmark_scenarios() {
  static const std::map<std::string, std::vector<std::string>> scaled_down{
      // DP 128 -> 1, each pipeline's 16 micro-batches kept.
      {"llama3-405b-16384xh100.yaml", {"cluster.nodes=16", "training.global_batch=16"}},
  };
  return scaled_down;
}

TEST(Pins, EveryShippedScenarioIsPinned) {
  const json pins =
      json::parse(read_file(std::string(CLUSTERSIM_TEST_DATA) + "/pins/scenarios.json"));
  EXPECT_EQ(pins.size(), scenario_files().size() - benchmark_scenarios().size())
      << "run scripts/update-pins.sh";
}

class EveryScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScenario, RunsAndWritesAConsistentResult) {
  const TempDir dir;
  const std::string file = kScenarios + "/" + GetParam();
  const auto json_path = (dir / "r.json").string();
  const auto large = benchmark_scenarios().find(GetParam());
  const std::vector<std::string> overrides =
      large == benchmark_scenarios().end() ? std::vector<std::string>{} : large->second;
  std::vector<std::string> args{"run", file, "--json", json_path, "--reproducible"};
  for (const auto& o : overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  const Outcome o = run_cli(args, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("iteration"), std::string::npos) << "no summary on stdout:\n" << o.out;
  const json j = json::parse(read_file(json_path));
  expect_design_keys(j);
  const models::Scenario sc = models::load_scenario(file, overrides);
  expect_consistent(j, sc);
  EXPECT_EQ(j["network_model"], "flow");  // every shipped scenario uses the default model
  if (overrides.empty()) expect_pinned(j, GetParam());
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.rfind('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryScenario, ::testing::ValuesIn(scenario_files()),
                         test_name);

TEST(Scenarios, AtLeastTheShippedOnesAreFound) {
  // scenarios/ holds four files today; the parametrized test above covers whatever is there.
  EXPECT_GE(scenario_files().size(), 4u);
}

}  // namespace
}  // namespace clustersim::cli::testing
