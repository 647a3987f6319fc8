// Chakra export (docs/interop.md) of the DDP scenario worked out by hand in
// tests/models/test_ddp.cpp (tests/data/ddp-by-hand.yaml): 4 GPUs at 100 TFLOP/s, layers L0..L3
// with 4e9, 1e9, 2e9, 1e9 forward FLOPs per sample, micro-batch 1. By hand (see that file's
// header):
//   forward 40, 10, 20, 10 us; backward (L3..L0) 20, 40, 20, 80 us; Adam 42 us;
//   all-reduce buckets of 1.6e6, 0.8e6, 0.6e6 B taking 51.6, 38.8, 35.6 us, which Chakra's whole
//   microseconds keep as 52, 39, 36.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "et_def.pb.h"
#include "models/chakra/chakra_export.hpp"
#include "models/frontend.hpp"

namespace clustersim::models::chakra {
namespace {

namespace fs = std::filesystem;

const std::string kScenario = std::string(CLUSTERSIM_TEST_DATA) + "/ddp-by-hand.yaml";

struct Trace {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
  std::vector<std::string> raw;  // each node's bytes, for protoc --decode
};

Trace read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  google::protobuf::io::IstreamInputStream stream(&in);
  Trace t;
  bool clean_eof = false;
  EXPECT_TRUE(
      google::protobuf::util::ParseDelimitedFromZeroCopyStream(&t.metadata, &stream, &clean_eof));
  for (;;) {
    ChakraProtoMsg::Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof))
      break;
    t.raw.push_back(node.SerializeAsString());
    t.nodes.push_back(std::move(node));
  }
  EXPECT_TRUE(clean_eof) << path << " ends inside a message";
  return t;
}

const ChakraProtoMsg::AttributeProto* attr(const ChakraProtoMsg::Node& n, const std::string& name) {
  for (const auto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

std::string category(const ChakraProtoMsg::Node& n) {
  const auto* a = attr(n, "category");
  return a ? a->string_val() : "";
}

class ChakraExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("clustersim-chakra-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    RunRequest request;
    request.scenario = kScenario;
    write_chakra_traces(predict(request), (dir_ / "ddp").string());
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ChakraExport, WritesOneTracePerRankAndTheCommGroups) {
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(fs::is_regular_file(dir_ / ("ddp." + std::to_string(r) + ".et"))) << r;
  EXPECT_FALSE(fs::exists(dir_ / "ddp.4.et"));
  std::ifstream in(dir_ / "ddp.json");
  const nlohmann::json groups = nlohmann::json::parse(in);
  // The pg_name of rank 0's all-reduces names the data-parallel group of all four ranks.
  const Trace t = read_trace((dir_ / "ddp.0.et").string());
  int collectives = 0;
  for (const auto& n : t.nodes) {
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    ++collectives;
    const std::string pg = attr(n, "pg_name")->string_val();
    ASSERT_TRUE(groups.contains(pg)) << pg;
    EXPECT_EQ(groups[pg].get<std::vector<int>>(), (std::vector<int>{0, 1, 2, 3}));
  }
  EXPECT_EQ(collectives, 3);
}

TEST_F(ChakraExport, NodesCarryTheHandDurationsSizesAndTypedAttributes) {
  const Trace t = read_trace((dir_ / "ddp.0.et").string());
  std::vector<std::uint64_t> forward, backward, optimizer, comm_duration;
  std::vector<std::int64_t> forward_ops, comm_size;
  for (const auto& n : t.nodes) {
    if (n.type() == ChakraProtoMsg::COMP_NODE) {
      ASSERT_NE(attr(n, "num_ops"), nullptr);
      EXPECT_EQ(attr(n, "num_ops")->value_case(), ChakraProtoMsg::AttributeProto::kInt64Val);
      EXPECT_EQ(attr(n, "tensor_size")->value_case(), ChakraProtoMsg::AttributeProto::kUint64Val);
      if (category(n) == "forward") {
        forward.push_back(n.duration_micros());
        forward_ops.push_back(attr(n, "num_ops")->int64_val());
      }
      if (category(n) == "backward") backward.push_back(n.duration_micros());
      if (category(n) == "optimizer") optimizer.push_back(n.duration_micros());
    } else if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
      EXPECT_EQ(attr(n, "comm_type")->value_case(), ChakraProtoMsg::AttributeProto::kInt64Val);
      EXPECT_EQ(attr(n, "comm_type")->int64_val(), ChakraProtoMsg::ALL_REDUCE);
      EXPECT_EQ(attr(n, "comm_size")->value_case(), ChakraProtoMsg::AttributeProto::kInt64Val);
      EXPECT_EQ(attr(n, "pg_name")->value_case(), ChakraProtoMsg::AttributeProto::kStringVal);
      comm_size.push_back(attr(n, "comm_size")->int64_val());
      comm_duration.push_back(n.duration_micros());
    }
    EXPECT_FALSE(attr(n, "is_cpu_op")->bool_val());
  }
  EXPECT_EQ(forward, (std::vector<std::uint64_t>{40, 10, 20, 10}));
  EXPECT_EQ(forward_ops, (std::vector<std::int64_t>{4'000'000'000, 1'000'000'000, 2'000'000'000,
                                                    1'000'000'000}));
  EXPECT_EQ(backward, (std::vector<std::uint64_t>{20, 40, 20, 80}));
  EXPECT_EQ(optimizer, (std::vector<std::uint64_t>{42}));
  EXPECT_EQ(comm_size, (std::vector<std::int64_t>{1'600'000, 800'000, 600'000}));
  EXPECT_EQ(comm_duration, (std::vector<std::uint64_t>{52, 39, 36}));
}

// Stream order: each all-reduce follows the previous one on the comm stream (a control and a data
// dependency); the first bucket (L3 + L2) waits for L2's backward; the optimizer for the last.
TEST_F(ChakraExport, DependenciesEncodeStreamOrderAndTheGradientsReadiness) {
  const Trace t = read_trace((dir_ / "ddp.0.et").string());
  std::vector<const ChakraProtoMsg::Node*> buckets;
  const ChakraProtoMsg::Node* l2_backward = nullptr;
  const ChakraProtoMsg::Node* optimizer_step = nullptr;
  std::vector<const ChakraProtoMsg::Node*> backward;
  for (const auto& n : t.nodes) {
    EXPECT_EQ(n.id(), static_cast<std::uint64_t>(&n - t.nodes.data()));
    for (const auto d : n.data_deps())
      EXPECT_LT(d, n.id());  // a DAG in file order
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) buckets.push_back(&n);
    if (category(n) == "backward") backward.push_back(&n);
    if (category(n) == "optimizer") optimizer_step = &n;
  }
  ASSERT_EQ(buckets.size(), 3u);
  ASSERT_EQ(backward.size(), 4u);
  l2_backward = backward[1];  // backward runs L3, L2, L1, L0
  auto has = [](const auto& list, std::uint64_t id) {
    return std::find(list.begin(), list.end(), id) != list.end();
  };
  EXPECT_EQ(buckets[0]->ctrl_deps_size(), 0);
  EXPECT_TRUE(has(buckets[0]->data_deps(), l2_backward->id()));
  for (int k = 1; k < 3; ++k) {
    ASSERT_EQ(buckets[k]->ctrl_deps_size(), 1);
    EXPECT_EQ(buckets[k]->ctrl_deps(0), buckets[k - 1]->id());
    EXPECT_TRUE(has(buckets[k]->data_deps(), buckets[k - 1]->id()));
  }
  ASSERT_NE(optimizer_step, nullptr);
  EXPECT_TRUE(has(optimizer_step->data_deps(), buckets[2]->id()));
}

// protoc, from the .proto alone, reads a written node as Chakra's schema says.
TEST_F(ChakraExport, ProtocDecodesAnExportedNode) {
  const Trace t = read_trace((dir_ / "ddp.0.et").string());
  std::size_t i = 0;
  while (i < t.nodes.size() && t.nodes[i].type() != ChakraProtoMsg::COMM_COLL_NODE)
    ++i;
  ASSERT_LT(i, t.nodes.size());
  const fs::path raw = dir_ / "node.bin";
  std::ofstream(raw, std::ios::binary) << t.raw[i];
  const fs::path proto(CLUSTERSIM_ET_DEF_PROTO);
  const std::string command = std::string(CLUSTERSIM_PROTOC) + " --decode=ChakraProtoMsg.Node -I " +
                              proto.parent_path().string() + " " + proto.filename().string() +
                              " < " + raw.string();
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    text.append(buffer, n);
  ASSERT_EQ(::pclose(pipe), 0) << command;
  EXPECT_NE(text.find("type: COMM_COLL_NODE"), std::string::npos) << text;
  EXPECT_NE(text.find("name: \"comm_size\"\n  int64_val: 1600000"), std::string::npos) << text;
  EXPECT_NE(text.find("name: \"comm_type\"\n  int64_val: 0"), std::string::npos) << text;
  EXPECT_NE(text.find("duration_micros: 52"), std::string::npos) << text;
}

}  // namespace
}  // namespace clustersim::models::chakra
