// The --trace file is Chrome Trace Event JSON as Perfetto reads it (DESIGN.md "Outputs"; the
// format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU), and
// the same scenario run twice gives byte-identical JSON (with --reproducible) and trace.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

using nlohmann::json;

const std::string kResnet = kScenarios + "/resnet50-ddp-dgx-a100.yaml";

// ResNet-50 on one DGX A100 as a 2-stage pipeline (dp 4, 2 micro-batches of 256): it has DDP
// buckets, pipeline send/recv pairs and NVLink counters, and stays small (8 ranks).
const std::vector<std::string> kPipelined = {"--set", "parallel.pp=2"};

json traced(const TempDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", kResnet, "--trace", (dir / "t.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const Outcome o = run_cli(args, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  return json::parse(read_file(dir / "t.json"));
}

TEST(Trace, IsChromeTraceEventJsonWithOneProcessPerRankAndOneThreadPerStream) {
  const TempDir dir;
  const json trace = traced(dir, kPipelined);
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  const std::set<std::string> phases = {"M", "X", "s", "f", "C"};

  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> named_threads;
  std::map<std::uint64_t, std::vector<json>> flows;
  int complete = 0, buckets = 0, collectives = 0, counters = 0, memory_points = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.at("ph");
    ASSERT_TRUE(phases.count(ph)) << e.dump();
    ASSERT_TRUE(e.at("pid").is_number_integer()) << e.dump();
    if (ph == "M" && e["name"] == "process_name")
      process_names[e["pid"].get<int>()] = e["args"]["name"];
    if (ph == "M" && e["name"] == "thread_name")
      named_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    if (ph == "X") {
      ++complete;
      for (const char* k : {"name", "ts", "dur", "pid", "tid", "args"})
        ASSERT_TRUE(e.contains(k)) << k << " missing: " << e.dump();
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(named_threads.count({e["pid"].get<int>(), e["tid"].get<int>()}))
          << "unnamed thread: " << e.dump();
      const auto& args = e["args"];
      EXPECT_TRUE(args.contains("bytes")) << e.dump();
      if (args["kind"] == "compute") {
        EXPECT_TRUE(args.contains("flops")) << e.dump();
      }
      if (args["kind"] == "collective") {
        ++collectives;
        EXPECT_TRUE(args.contains("group")) << e.dump();
      }
      if (e["cat"] == "dp-comm") {
        ++buckets;
        EXPECT_TRUE(args.contains("chunk")) << "a DDP bucket without its chunk: " << e.dump();
      }
    }
    if (ph == "s" || ph == "f") flows[e.at("id").get<std::uint64_t>()].push_back(e);
    if (ph == "C" && e.at("name") == "memory") {
      // The memory model's counter track of the peak rank (docs/memory.md "Timeline").
      ++memory_points;
      EXPECT_GT(e.at("args").at("bytes").get<double>(), 0.0);
      EXPECT_LT(e["pid"].get<int>(), 8);
    } else if (ph == "C") {
      ++counters;
      const double u = e.at("args").at("utilization");
      EXPECT_GE(u, 0.0);
      EXPECT_LE(u, 1.0 + 1e-9);
      EXPECT_EQ(process_names[e["pid"].get<int>()], "network");
    }
  }
  // 8 ranks, each named, plus the network process of the counters.
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(process_names[r], "rank " + std::to_string(r));
  EXPECT_EQ(process_names[8], "network");
  EXPECT_GT(complete, 0);
  EXPECT_GT(collectives, 0);
  EXPECT_GT(buckets, 0);
  EXPECT_GT(counters, 0);
  EXPECT_GT(memory_points, 1);
  // Every flow arrow is one "s" and one "f" sharing an id, from one rank to another; each pipeline
  // boundary carries activations forward and gradients back for both micro-batches, per dp
  // replica: 4 replicas × 2 micro-batches × 2 directions = 16 arrows.
  EXPECT_EQ(flows.size(), 16u);
  for (const auto& [id, pair] : flows) {
    ASSERT_EQ(pair.size(), 2u) << "flow " << id;
    EXPECT_EQ(pair[0]["ph"], "s");
    EXPECT_EQ(pair[1]["ph"], "f");
    EXPECT_NE(pair[0]["pid"], pair[1]["pid"]);
    EXPECT_LE(pair[0]["ts"].get<double>(), pair[1]["ts"].get<double>());
  }
}

TEST(Trace, SameScenarioTwiceGivesByteIdenticalOutputs) {
  const TempDir a, b;
  for (const TempDir* d : {&a, &b}) {
    const Outcome o = run_cli({"run", kResnet, "--set", "parallel.pp=2", "--reproducible", "--json",
                               (*d / "r.json").string(), "--trace", (*d / "t.json").string()},
                              *d);
    ASSERT_EQ(o.code, 0) << o.err;
  }
  const std::string json_a = read_file(a / "r.json");
  const std::string trace_a = read_file(a / "t.json");
  ASSERT_FALSE(json_a.empty());
  ASSERT_FALSE(trace_a.empty());
  EXPECT_TRUE(json_a == read_file(b / "r.json")) << "result JSON differs between runs";
  EXPECT_TRUE(trace_a == read_file(b / "t.json")) << "trace differs between runs";
}

}  // namespace
}  // namespace clustersim::cli::testing
