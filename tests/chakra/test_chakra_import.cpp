// Chakra import (docs/interop.md "Import"): `workload: {chakra: PREFIX, comm_groups: FILE}`.
//
// By hand, on 2 GPUs under the ideal network (communication takes no time), durations in us:
//   rank 0: A 10 [0, 10]; B 5 after A [10, 15]; send to rank 1 after B; all-reduce after the
//           send; E 3 after the all-reduce.
//   rank 1: C 20 [0, 20]; recv from rank 0 after C; D 7 after the recv [20, 27]; all-reduce
//           after D.
//   The send and recv meet at 20 (the recv is posted after C), the all-reduce when rank 1
//   arrives at 27, so E runs [27, 30]: the iteration is 30 us, rank 0 the critical rank, idle
//   there from 15 to 27.
// Rank 0's file lists E before the all-reduce it depends on: import issues it after.
#include <google/protobuf/util/delimited_message_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "et_def.pb.h"
#include "models/chakra/chakra_export.hpp"
#include "models/frontend.hpp"
#include "models/result_json.hpp"

namespace clustersim::models::chakra {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

struct NodeSpec {
  std::uint64_t id;
  std::string name;
  pb::NodeType type;
  std::vector<std::uint64_t> deps;
  std::uint64_t micros = 0;
  std::vector<std::pair<std::string, std::int64_t>> ints = {};
  std::vector<std::pair<std::string, std::string>> texts = {};
};

void write_trace(const fs::path& path, const std::vector<NodeSpec>& nodes) {
  std::ofstream out(path, std::ios::binary);
  pb::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToOstream(metadata, &out));
  for (const NodeSpec& n : nodes) {
    pb::Node node;
    node.set_id(n.id);
    node.set_name(n.name);
    node.set_type(n.type);
    for (const auto d : n.deps)
      node.add_data_deps(d);
    node.set_duration_micros(n.micros);
    for (const auto& [name, v] : n.ints) {
      auto* a = node.add_attr();
      a->set_name(name);
      a->set_int64_val(v);
    }
    for (const auto& [name, v] : n.texts) {
      auto* a = node.add_attr();
      a->set_name(name);
      a->set_string_val(v);
    }
    ASSERT_TRUE(google::protobuf::util::SerializeDelimitedToOstream(node, &out));
  }
}

const std::vector<NodeSpec> kRank0 = {
    {1, "A", pb::COMP_NODE, {}, 10, {{"num_ops", 1'000'000'000}}},
    {2, "B", pb::COMP_NODE, {1}, 5},
    {3,
     "send act",
     pb::COMM_SEND_NODE,
     {2},
     0,
     {{"comm_src", 0}, {"comm_dst", 1}, {"comm_tag", 7}, {"comm_size", 1'000'000}}},
    {5, "E", pb::COMP_NODE, {4}, 3, {}, {{"rf_id", "x"}}},
    {4,
     "grads all_reduce",
     pb::COMM_COLL_NODE,
     {3},
     0,
     {{"comm_type", pb::ALL_REDUCE}, {"comm_size", 4'000'000}},
     {{"pg_name", "1"}}},
};
const std::vector<NodeSpec> kRank1 = {
    {10, "C", pb::COMP_NODE, {}, 20},
    {11,
     "recv act",
     pb::COMM_RECV_NODE,
     {10},
     0,
     {{"comm_src", 0}, {"comm_dst", 1}, {"comm_tag", 7}, {"comm_size", 1'000'000}}},
    {12, "D backward", pb::COMP_NODE, {11}, 7},
    {13,
     "grads all_reduce",
     pb::COMM_COLL_NODE,
     {12},
     0,
     {{"comm_type", pb::ALL_REDUCE}, {"comm_size", 4'000'000}},
     {{"pg_name", "1"}}},
};

class ChakraImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustersim-chakra-import-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    write_trace(dir_ / "w.0.et", kRank0);
    write_trace(dir_ / "w.1.et", kRank1);
    std::ofstream(dir_ / "groups.json") << R"({"1": [0, 1]})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A 2-GPU scenario running the traces under `network`.
  std::string scenario(const std::string& workload = "{chakra: w, comm_groups: groups.json}",
                       const std::string& network = "ideal") const {
    const fs::path path = dir_ / "s.yaml";
    std::ofstream(path) << "cluster:\n"
                           "  nodes: 1\n"
                           "  gpus_per_node: 2\n"
                           "  gpu: {peak_tflops: {bf16: 100}, hbm_bandwidth: 1TB/s, memory: 80GB}\n"
                           "  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s}\n"
                           "workload: "
                        << workload << "\nsimulation: {network_model: " << network << "}\n";
    return path.string();
  }
  Prediction run(const std::string& path) const {
    RunRequest request;
    request.scenario = path;
    return predict(request);
  }
  // The ScenarioError message of running `path`, "" when it ran.
  std::string error_of(const std::string& path) const {
    try {
      run(path);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(ChakraImport, AHandWrittenTraceRunsAsWorkedOutByHand) {
  const Prediction p = run(scenario());
  const Result& r = p.output.result;
  EXPECT_NEAR(r.iteration_time_s, 30e-6, 1e-15);
  EXPECT_EQ(r.critical_rank, 0u);
  EXPECT_NEAR(r.breakdown_s.idle, 12e-6, 1e-15);     // rank 0 waits from 15 to 27
  EXPECT_NEAR(r.breakdown_s.compute, 18e-6, 1e-15);  // A, B and E
  // Op by op: E was listed before the all-reduce but waits for it.
  const engine::Schedule& s = p.output.built.schedule;
  const engine::Timeline& t = p.output.timeline;
  auto at = [&](const std::string& name, engine::Rank rank) {
    for (engine::OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].rank == rank && s.name_of(s.ops[id]) == name)
        return std::pair{t.start[id].seconds() * 1e6, t.end[id].seconds() * 1e6};
    ADD_FAILURE() << name << " not found on rank " << rank;
    return std::pair{-1.0, -1.0};
  };
  for (const auto& [name, rank, start, end] :
       {std::tuple{"B", 0u, 10.0, 15.0}, {"D backward", 1u, 20.0, 27.0}, {"E", 0u, 27.0, 30.0}}) {
    const auto [s_us, e_us] = at(name, rank);
    EXPECT_NEAR(s_us, start, 1e-9) << name;
    EXPECT_NEAR(e_us, end, 1e-9) << name;
  }
  // TFLOP/s from num_ops: 1e9 FLOPs on 2 GPUs over 30 us.
  EXPECT_NEAR(r.tflops_per_gpu, 1e9 / (2 * 30e-6) / 1e12, 1e-9);
  // Categories: "D backward" by its name, the rest forward; the all-reduce dp-comm.
  EXPECT_EQ(s.ops[s.ops.size() - 2].category, engine::Category::backward);
  bool reordered = false, unread = false;
  for (const std::string& note : r.notes) {
    reordered |= note.find("topological order") != std::string::npos;
    unread |=
        note.find("attributes not read (nodes carrying them): rf_id (1)") != std::string::npos;
  }
  EXPECT_TRUE(reordered);
  EXPECT_TRUE(unread);
}

TEST_F(ChakraImport, FiguresTheTracesCannotGiveAreNullNotZero) {
  const Prediction p = run(scenario());
  const nlohmann::ordered_json j = result_to_json(p.output.result, true);
  EXPECT_TRUE(j["tokens_per_s"].is_null());
  EXPECT_TRUE(j["samples_per_s"].is_null());
  EXPECT_TRUE(j["mfu"].is_null());
  EXPECT_TRUE(j["memory"].is_null());
  EXPECT_EQ(j["workload"], "chakra");
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), 30e-6, 1e-15);
}

TEST_F(ChakraImport, BadTracesAreErrorsThatNameTheFileAndTheNode) {
  // Without the comm-group file, pg_name "1" names nothing.
  EXPECT_NE(error_of(scenario("{chakra: w}")).find("pg_name \"1\" is not a group"),
            std::string::npos);
  // A model beside the traces.
  {
    const std::string path = scenario();
    std::ofstream(path, std::ios::app) << "model: llama2-7b\n";
    EXPECT_NE(error_of(path).find("model: a Chakra workload (workload.chakra) replaces model"),
              std::string::npos)
        << error_of(path);
  }
  // A third trace for a 2-GPU cluster.
  fs::copy_file(dir_ / "w.1.et", dir_ / "w.2.et");
  EXPECT_NE(error_of(scenario()).find("w.2.et: a trace for rank 2, but the cluster has 2 GPUs"),
            std::string::npos);
  fs::remove(dir_ / "w.2.et");
  // A dependency on a node the trace lacks, a cycle, an unknown node type, a foreign sender.
  const std::vector<std::pair<std::vector<NodeSpec>, std::string>> bad = {
      {{{1, "A", pb::COMP_NODE, {9}, 1}}, "w.1.et: node 1 ('A'): depends on node 9"},
      {{{1, "A", pb::COMP_NODE, {2}, 1}, {2, "B", pb::COMP_NODE, {1}, 1}},
       "w.1.et: the dependencies form a cycle"},
      {{{1, "load", pb::MEM_LOAD_NODE, {}, 1}},
       "w.1.et: node 1 ('load'): node type MEM_LOAD_NODE is not simulated"},
      {{{1,
         "recv",
         pb::COMM_RECV_NODE,
         {},
         0,
         {{"comm_src", 0}, {"comm_dst", 0}, {"comm_size", 8}}}},
       "comm_dst is 0 in the trace of rank 1; allowed: 1"},
      {{{1, "ar", pb::COMM_COLL_NODE, {}, 0, {{"comm_type", 42}, {"comm_size", 8}}}},
       "comm_type 42 is not a Chakra collective"},
      // A recv posted on a communicator the comm-group file does not have.
      {{{1,
         "recv",
         pb::COMM_RECV_NODE,
         {},
         0,
         {{"comm_src", 0}, {"comm_dst", 1}, {"comm_size", 8}},
         {{"pg_name", "9"}}}},
       "node 1 ('recv'): pg_name \"9\" is not a group of"},
  };
  for (const auto& [nodes, message] : bad) {
    write_trace(dir_ / "w.1.et", nodes);
    const std::string e = error_of(scenario());
    EXPECT_NE(e.find("workload.chakra: "), std::string::npos) << e;
    EXPECT_NE(e.find(message), std::string::npos) << e;
  }
  // Collectives that do not match across ranks cannot run: bad input, not a crash.
  write_trace(dir_ / "w.1.et", {{10, "C", pb::COMP_NODE, {}, 20}});
  EXPECT_NE(error_of(scenario()).find("the traces cannot run"), std::string::npos);
}

// Export, then import on the same cluster: the native run's iteration time within 1e-9, for
// plans of every kind Chakra expresses (DDP buckets, FSDP, TP, a pipeline, MoE all-to-all), and
// a pipeline whose sends run on its group's communicator (pg_name on send and recv nodes: 4
// channels a 32 MiB send on one node of 8, where a pair's communicator would give 16).
TEST_F(ChakraImport, ARoundTripGivesTheNativeIterationTime) {
  for (const std::string& file :
       {std::string(CLUSTERSIM_TEST_DATA) + "/ddp-by-hand.yaml",
        std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-pp4.yaml",
        std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-pcie-tp4.yaml",
        std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-fsdp-2xdgx-a100.yaml",
        std::string(CLUSTERSIM_SCENARIOS_DIR) + "/mixtral-8x7b-ep8-dgx-h100.yaml",
        std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-dgx-h100-pp8-dualpipe.yaml"}) {
    SCOPED_TRACE(file);
    RunRequest request;
    request.scenario = file;
    request.every_rank = true;
    const Prediction native = predict(request);
    const std::string prefix = (dir_ / fs::path(file).stem()).string();
    write_chakra_traces(native, prefix);
    Scenario imported = native.scenario;
    imported.workload = {prefix, prefix + ".json"};
    const RunOutput again = run_scenario(imported);
    EXPECT_NEAR(again.result.iteration_time_s, native.output.result.iteration_time_s,
                1e-9 * native.output.result.iteration_time_s);
    EXPECT_EQ(again.built.schedule.ops.size(), native.output.built.schedule.ops.size());
    EXPECT_NEAR(again.result.exposed_comm_s.total, native.output.result.exposed_comm_s.total,
                1e-9 * native.output.result.iteration_time_s);
  }
}

}  // namespace
}  // namespace clustersim::models::chakra
