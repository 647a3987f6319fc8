// Pipeline-parallel memory against hand-derived figures: the activations Megatron's interleaved
// schedule keeps in flight (warm-up (p − s − 1)·2 + (v − 1)·p chunk forwards, plus the one that
// runs before the first backward), a Llama 3 405B block's saved tensors with sequence parallelism,
// and NCCL's buffers for a send/recv-only pipeline communicator (docs/memory.md).
#include <gtest/gtest.h>

#include <string>

#include "models/memory_model.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Llama 3 405B's block (h 16384, 128 heads of 128, 8 KV heads, SwiGLU f = 53248) at s = 8192,
// b = 1, tp 8 with sequence parallelism, flash attention, no dropout, bf16. Per block:
// attention keeps the norm input and the QKV GEMM's input (both sequence-sharded: s·h/t), q
// (s·h/t), k and v (s·kv·d/t each), FlashAttention's fp32 log-sum-exp (a/t·s), and its output (the
// projection's input, s·h/t); the MLP keeps the norm input and fc1's input (s·h/t each), gate and
// up (2·s·f/t) and fc2's input (s·f/t). 2 bytes each, 4 for the log-sum-exp.
constexpr double kS = 8192, kH = 16384, kF = 53248, kT = 8, kHeads = 128, kKvWidth = 8 * 128;
constexpr double kAttention =
    2 * kS * kH / kT * 4 + 2 * 2 * kS * kKvWidth / kT + 4 * (kHeads / kT) * kS;
constexpr double kMlp = 2 * kS * kH / kT * 2 + 2 * kS * (2 * kF) / kT + 2 * kS * kF / kT;
constexpr double kBlock = kAttention + kMlp;

std::string llama_pipeline(int layers, int pp, int chunks, int microbatches) {
  return "name: llama3-pipeline\n"
         "cluster: {nodes: " +
         std::to_string(pp) +
         ", node: dgx-h100}\n"
         "model: {num_layers: " +
         std::to_string(layers) +
         ", hidden_size: 16384, num_heads: 128, num_kv_heads: 8,\n"
         "        ffn_hidden_size: 53248, vocab_size: 128256, activation: swiglu, norm: rmsnorm,\n"
         "        bias: false, learned_positions: false, tied_embeddings: false}\n"
         "training: {global_batch: " +
         std::to_string(microbatches) +
         ", micro_batch: 1, seq_len: 8192, precision: bf16,\n"
         "           recompute: none, optimizer: adamw, attention: flash}\n"
         "parallel: {tp: 8, pp: " +
         std::to_string(pp) + ", schedule: interleaved, virtual_stages: " + std::to_string(chunks) +
         ", sequence_parallel: true, data_parallel: ddp}\n"
         "simulation: {network_model: ideal}\n";
}

// Per block, the closed form above: 31.75·s·h/t bytes plus the log-sum-exp, 0.53 GB (1.47 GB
// without sequence parallelism, where the norms' and GEMMs' inputs are whole on every rank).
TEST(PipelineMemory, Llama3BlockWithSequenceParallelismKeeps31_75SHOverT) {
  EXPECT_DOUBLE_EQ(kBlock, 31.75 * kS * kH / kT + 4 * (kHeads / kT) * kS);
  EXPECT_NEAR(kBlock / 1e9, 0.533, 0.001);
}

// Interleaved 1F1B, p = 4 stages, v = 4 chunks of one block each, m = 8 micro-batches. Stage s
// runs (p − s − 1)·2 + (v − 1)·p warm-up chunk forwards, then one more before its first backward:
// stage 0 holds 6 + 12 + 1 = 19 block-micro-batches, stage 1 17, stage 2 15 (Megatron-LM's
// interleaved warm-up; Narayanan et al. 2021). The embedding saves nothing without dropout, so
// stages 0-2 hold exactly that many blocks.
TEST(PipelineMemory, InterleavedScheduleHoldsItsWarmUpChunks) {
  const Scenario sc = parse_scenario(llama_pipeline(16, 4, 4, 8), "test");
  const MemoryEstimate m = estimate_memory_only(sc);
  ASSERT_EQ(m.per_stage_saved_activations.size(), 4u);
  const double blocks[] = {19, 17, 15};
  for (int s = 0; s < 3; ++s) {
    SCOPED_TRACE("stage " + std::to_string(s));
    EXPECT_NEAR(m.per_stage_saved_activations[static_cast<std::size_t>(s)], blocks[s] * kBlock,
                1e-6 * kBlock);
  }
}

// With as many micro-batches as stages every forward runs before the first backward (the warm-up
// exceeds m·v): each stage holds m × its blocks.
TEST(PipelineMemory, InterleavedWithMicroBatchesEqualToStagesHoldsThemAll) {
  const Scenario sc = parse_scenario(llama_pipeline(16, 4, 2, 4), "test");
  const MemoryEstimate m = estimate_memory_only(sc);
  EXPECT_NEAR(m.per_stage_saved_activations[1], 4 * 4 * kBlock, 1e-6 * kBlock);
}

// A pipeline communicator only sends and receives: NCCL's p2p buffers (two neighbours, 2 channels
// each, a 4 MiB Simple and a 512 KiB LL buffer per direction) instead of the ring and tree buffers
// of a collective communicator (32 channels × 2 connections × 9.1875 MiB on NVSwitch nodes).
TEST(PipelineMemory, PipelineCommunicatorHoldsPointToPointBuffersOnly) {
  const std::string text =
      "name: pp-nccl\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
      "training: {global_batch: 8, micro_batch: 1, seq_len: 512, precision: bf16}\n"
      "parallel: {tp: 1, pp: 4, data_parallel: ddp}\n"
      "simulation: {network_model: ideal}\n";
  // 4 stages × dp 2 on one 8-GPU A100 node (no NVLink SHARP): a dp communicator and a pipeline.
  const MemoryEstimate m = estimate_memory_only(parse_scenario(text, "test"));
  const double dp_ring_tree = 32 * 2 * (4 + 0.5 + 4.6875) * kMiB;
  const double pp_p2p = 2 * 2 * 2 * (4 + 0.5) * kMiB;
  EXPECT_DOUBLE_EQ(m.overheads.nccl, dp_ring_tree + pp_p2p);
}

}  // namespace
}  // namespace clustersim::models
