// HSDP with mixture-of-experts blocks (docs/parallelism.md "HSDP"): routed experts are sharded
// inside the shard group and replicated across, as FSDP2's hybrid mesh treats every parameter,
// so their gathers stay on the node's NVLink and only the gradient shard crosses the network.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "moe_test_model.hpp"
#include "rank0_ops.hpp"

namespace clustersim::models {
namespace {

using engine::CollectiveType;

// 2 blocks, h = 1024, 8 SwiGLU experts of ffn 2048, top-2; two nodes of 8 GPUs, HSDP with the
// default shard group (the 8 dp ranks of a node), bf16 gradients.
constexpr double kH = 1024, kFe = 2048, kE = 8;

Scenario parse(int ep) {
  return parse_scenario(
      "name: hsdp-moe\n"
      "cluster: {nodes: 2, gpus_per_node: 8, gpu: H100-SXM5-80GB,\n"
      "          intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s},\n"
      "          network: {topology: single-switch}}\n" +
          small_moe_model(2) +
          "training: {global_batch: 16, micro_batch: 1, seq_len: 512, precision: bf16}\n"
          "parallel: {ep: " +
          std::to_string(ep) + ", data_parallel: hsdp}\n",
      "hsdp-moe.yaml");
}

// ep 1: every rank holds all 8 experts of a block (3·h·ffn each); they are gathered and
// reduce-scattered over the node (ranks 0-7), and the 1/8 gradient shard, 8·3·h·ffn/8 bf16
// values, is all-reduced with the same position on the other node (ranks 0 and 8).
TEST(HsdpMoe, ExpertsShardInsideTheNodeAndReplicateAcross) {
  const auto built = build_schedule(parse(1));
  const auto& s = built.schedule;
  const std::vector<engine::Rank> node{0, 1, 2, 3, 4, 5, 6, 7};
  const auto gather = find_op(s, 0, "fsdp U1 all_gather experts fwd mb0");
  EXPECT_EQ(group_ranks(s, gather), node);
  EXPECT_EQ(s.ops[gather].bytes, static_cast<std::uint64_t>(kE * 3 * kH * kFe * 2));
  const auto rs = find_op(s, 0, "fsdp U1 experts reduce_scatter mb0");
  EXPECT_EQ(group_ranks(s, rs), node);
  const auto ar = find_op(s, 0, "fsdp U1 experts replica all_reduce mb0");
  EXPECT_EQ(s.ops[ar].collective, CollectiveType::all_reduce);
  EXPECT_EQ(group_ranks(s, ar), (std::vector<engine::Rank>{0, 8}));
  EXPECT_EQ(s.ops[ar].bytes, static_cast<std::uint64_t>(kE * 3 * kH * kFe / 8 * 2));
}

// ep 2: rank 0 holds experts 0-3; the ranks holding them are those of ep index 0 (even ranks).
// Inside rank 0's node that is 0, 2, 4, 6 (the experts' shard group, 8 / ep = 4); across nodes
// rank 8 holds the same shard. The all-reduce carries 4 experts' 3·h·ffn / 4 bf16 values.
TEST(HsdpMoe, ExpertParallelismSplitsTheShardGroupByEp) {
  const auto built = build_schedule(parse(2));
  const auto& s = built.schedule;
  const auto gather = find_op(s, 0, "fsdp U1 all_gather experts fwd mb0");
  EXPECT_EQ(group_ranks(s, gather), (std::vector<engine::Rank>{0, 2, 4, 6}));
  EXPECT_EQ(s.ops[gather].bytes, static_cast<std::uint64_t>(kE / 2 * 3 * kH * kFe * 2));
  const auto ar = find_op(s, 0, "fsdp U1 experts replica all_reduce mb0");
  EXPECT_EQ(group_ranks(s, ar), (std::vector<engine::Rank>{0, 8}));
  EXPECT_EQ(s.ops[ar].bytes, static_cast<std::uint64_t>(kE / 2 * 3 * kH * kFe / 4 * 2));
  // Rank 1 (ep index 1) pairs with the odd ranks of its node and rank 9.
  const auto ar1 = find_op(s, 1, "fsdp U1 experts replica all_reduce mb0");
  EXPECT_EQ(group_ranks(s, ar1), (std::vector<engine::Rank>{1, 9}));
}

// Plain FSDP keeps sharding the experts over the whole expert-dp group (both nodes), with no
// replica all-reduce.
TEST(HsdpMoe, FsdpShardsExpertsOverTheWholeExpertDataParallelGroup) {
  Scenario sc = parse(2);
  sc.parallel.data_parallel = DataParallel::fsdp;
  const auto built = build_schedule(sc);
  const auto& s = built.schedule;
  EXPECT_EQ(group_ranks(s, find_op(s, 0, "fsdp U1 all_gather experts fwd mb0")).size(), 8u);
  EXPECT_THROW(find_op(s, 0, "fsdp U1 experts replica all_reduce mb0"), std::runtime_error);
}

}  // namespace
}  // namespace clustersim::models
