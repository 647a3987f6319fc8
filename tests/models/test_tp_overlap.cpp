// TP communication overlap (parallel.tp_comm_overlap, docs/parallelism.md "TP communication
// overlap"): Transformer Engine's userbuffers run the sequence-parallel all-gathers and
// reduce-scatters of attention and MLP blocks beside their GEMMs. The bytes are worked by hand;
// the timeline is checked against what overlap means: the side collectives start with the
// compute, the next op waits for both, and only the reduce-scatter's last chunk (and whatever
// outlasts the compute) stays exposed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/memory_model.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/rank0_ops.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::OpId;

// 4 Llama-shaped blocks (h = 4096) at s = 4096, b = 1 on one DGX H100: tp 8 with sequence
// parallelism, no data parallelism, so rank 0's time is one chain of its own ops.
constexpr std::uint64_t kActivationBytes = 1ULL * 4096 * 4096 * 2;  // b·s·h, bf16

std::string llama(const std::string& parallel, const std::string& cluster = "nodes: 1") {
  return "name: tpo\n"
         "cluster: {" +
         cluster +
         ", node: dgx-h100}\n"
         "model: {num_layers: 4, hidden_size: 4096, num_heads: 32, num_kv_heads: 32, "
         "ffn_hidden_size: 11008, vocab_size: 32000, activation: swiglu, norm: rmsnorm, "
         "bias: false, learned_positions: false}\n"
         "training: {global_batch: 2, micro_batch: 1, seq_len: 4096, precision: bf16, "
         "attention: flash}\n"
         "parallel: {tp: 8, sequence_parallel: true" +
         parallel +
         "}\n"
         "simulation: {network_model: analytical}\n";
}

bool on_compute_stream(const engine::Schedule& s, OpId id) {
  return s.stream_names[s.ops[id].stream] == "compute";
}

// The forward all-gather carries the whole b·s·h; the reduce-scatter's first three chunks run
// beside the GEMM and the last quarter after it; backward moves the same bytes as without
// overlap, on the side stream.
TEST(TpCommOverlap, TheReduceScattersLastChunkStaysOnTheComputeStream) {
  // Against every TP collective on the compute stream (no asynchronous input-gradient reduction).
  const auto plain =
      build_schedule(parse_scenario(llama(", tp_async_grad_reduce: false"), "tpo.yaml"));
  const auto over = build_schedule(parse_scenario(llama(", tp_comm_overlap: true"), "tpo.yaml"));
  const auto& s = over.schedule;
  EXPECT_EQ(rank0_op(plain.schedule, "L0.attn fwd tp reduce_scatter mb0").bytes, kActivationBytes);
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp all_gather mb0").bytes, kActivationBytes);
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp reduce_scatter overlapped mb0").bytes,
            kActivationBytes / 4 * 3);
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp reduce_scatter mb0").bytes, kActivationBytes / 4);
  EXPECT_EQ(rank0_op(s, "L0.mlp bwd tp reduce_scatter overlapped mb0").bytes, kActivationBytes);
  EXPECT_EQ(s.stream_names[rank0_op(s, "L0.attn fwd tp all_gather mb0").stream], "tp overlap");
  EXPECT_EQ(s.stream_names[rank0_op(s, "L0.mlp bwd tp all_gather mb0").stream], "tp overlap");
  EXPECT_EQ(s.stream_names[rank0_op(s, "L0.attn fwd tp reduce_scatter mb0").stream], "compute");
  // One more op per overlapped forward block (the split reduce-scatter); in backward both
  // re-gather each column-parallel input for its weight gradient, the plain plan on the compute
  // stream, the overlapped one beside it (Transformer Engine's bulk overlap):
  // 8 ranks · 4 layers · 2 blocks (attention, MLP) · 2 micro-batches.
  const auto count = [](const engine::Schedule& sched, const std::string& tail) {
    std::size_t n = 0;
    for (const auto& op : sched.ops)
      n += sched.name_of(op).ends_with(tail);
    return n;
  };
  EXPECT_EQ(count(s, "fwd tp reduce_scatter overlapped"), 8u * 4u * 2u * 2u);
  EXPECT_EQ(count(plain.schedule, "bwd tp all_gather wgrad input"), 8u * 4u * 2u * 2u);
  EXPECT_EQ(count(s, "bwd tp all_gather wgrad input"), 8u * 4u * 2u * 2u);
  EXPECT_EQ(rank0_op(plain.schedule, "L0.attn bwd tp all_gather wgrad input mb0").bytes,
            kActivationBytes);
  EXPECT_EQ(rank0_op(s, "L0.attn bwd tp all_gather wgrad input mb0").bytes, kActivationBytes);
  EXPECT_EQ(s.stream_names[rank0_op(s, "L0.mlp bwd tp all_gather wgrad input mb0").stream],
            "tp overlap");
  EXPECT_EQ(s.ops.size() - plain.schedule.ops.size(), 8u * 4u * 2u * 2u);
}

// Each side collective starts when the compute beside it may start, and the block's next op on
// the compute stream waits for both; the exposed TP time is the collectives left on the compute
// stream plus whatever a side chain outlasts its compute by. What overlap removes from the
// iteration is exactly what it removes from the exposed TP time while the side collectives leave
// the compute its SMs (simulation.sm_sharing: false); with the SMs they hold charged, the compute
// beside them is slower and the iteration gains less.
TEST(TpCommOverlap, SideCollectivesHideBehindTheBlocksCompute) {
  const std::vector<std::string> free_sms = {"simulation.sm_sharing=false"};
  const auto over = run_scenario(
      parse_scenario(llama(", tp_comm_overlap: true, overlap: false"), "tpo.yaml", free_sms));
  const auto& s = over.built.schedule;
  const auto& tl = over.timeline;
  double exposed = 0;
  int sides = 0;
  for (OpId x = 0; x < s.ops.size() && s.ops[x].rank == 0; ++x) {
    if (s.ops[x].category != Category::tp_comm) continue;
    if (on_compute_stream(s, x)) {
      exposed += (tl.end[x] - tl.start[x]).seconds();
      continue;
    }
    if (s.label(s.ops[x]).find("all_gather") == std::string::npos) continue;
    if (s.label(s.ops[x]).find("wgrad input") != std::string::npos) continue;  // mid-chain
    ++sides;
    // The block's compute: the next op of rank 0 on the compute stream.
    OpId compute = x + 1;
    while (!on_compute_stream(s, compute))
      ++compute;
    EXPECT_EQ(tl.launch[x], tl.start[compute]) << s.label(s.ops[x]);
    // The side chain ends with the reduce-scatter issued right after the same compute (in
    // backward after the bulk re-gather of the column-parallel input).
    OpId chain_end = compute + 1;
    ASSERT_FALSE(on_compute_stream(s, chain_end)) << s.label(s.ops[x]);
    if (s.label(s.ops[chain_end]).find("wgrad input") != std::string::npos) ++chain_end;
    ASSERT_FALSE(on_compute_stream(s, chain_end)) << s.label(s.ops[x]);
    ASSERT_NE(s.label(s.ops[chain_end]).find("reduce_scatter overlapped"), std::string::npos);
    exposed += std::max(0.0, (tl.end[chain_end] - tl.end[compute]).seconds());
    OpId next = compute + 1;
    while (next < s.ops.size() && s.ops[next].rank == 0 && !on_compute_stream(s, next))
      ++next;
    if (next < s.ops.size() && s.ops[next].rank == 0) {
      EXPECT_GE(tl.start[next], std::max(tl.end[chain_end], tl.end[compute]))
          << s.label(s.ops[next]);
    }
  }
  // 4 blocks · 2 · 2 micro-batches, forward and backward.
  EXPECT_EQ(sides, 32);
  EXPECT_NEAR(over.result.breakdown_s.tp_comm, exposed, 1e-9);

  const auto plain = run_scenario(
      parse_scenario(llama(", overlap: false, tp_async_grad_reduce: false"), "tpo.yaml", free_sms));
  EXPECT_LT(over.result.breakdown_s.tp_comm, 0.5 * plain.result.breakdown_s.tp_comm);
  EXPECT_NEAR(plain.result.iteration_time_s - over.result.iteration_time_s,
              plain.result.breakdown_s.tp_comm - over.result.breakdown_s.tp_comm, 1e-9);

  const auto shared =
      run_scenario(parse_scenario(llama(", tp_comm_overlap: true, overlap: false"), "tpo.yaml"));
  EXPECT_GT(shared.result.breakdown_s.compute, over.result.breakdown_s.compute);
  EXPECT_GT(shared.result.iteration_time_s, over.result.iteration_time_s);
  EXPECT_LT(shared.result.iteration_time_s, plain.result.iteration_time_s);  // still a gain
}

// Ten b·s·h bf16 userbuffers, one per overlapped GEMM of a layer (Transformer Engine's
// qkv_fprop, proj_fprop, fc1_fprop, fc2_fprop, proj_dgrad, fc2_dgrad, qkv_dgrad, qkv_wgrad,
// fc1_dgrad, fc1_wgrad), for the whole run.
TEST(TpCommOverlap, UserbuffersAreCountedInTheBuffers) {
  const double plain = estimate_memory_only(parse_scenario(llama(""), "tpo.yaml")).peak.buffers;
  const double over =
      estimate_memory_only(parse_scenario(llama(", tp_comm_overlap: true"), "tpo.yaml"))
          .peak.buffers;
  EXPECT_DOUBLE_EQ(over - plain, 10.0 * static_cast<double>(kActivationBytes));
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse_scenario(text, "bad.yaml");
    ADD_FAILURE() << "accepted; expected an error on parallel.tp_comm_overlap";
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(": parallel.tp_comm_overlap: "), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(TpCommOverlap, NeedsSequenceParallelismInsideANode) {
  std::string no_sp = llama(", tp_comm_overlap: true");
  no_sp.replace(no_sp.find("sequence_parallel: true"), 23, "sequence_parallel: false");
  expect_error(no_sp, "sequence_parallel: true");
  // tp 16 over two DGX nodes: each TP group spans both.
  std::string wide = llama(", tp_comm_overlap: true", "nodes: 2");
  wide.replace(wide.find("tp: 8"), 5, "tp: 16");
  expect_error(wide, "inside one node");
}

}  // namespace
}  // namespace clustersim::models
