// FP8 training (docs/fp8.md): only the GEMMs run in fp8; what is stored
// and sent stays bf16 (2 bytes an element) but the sequence-parallel all-gathers of GEMM inputs,
// and parallel.fp8_comm sends the MoE dispatch and parameter all-gathers in fp8 (1 byte).
// Message sizes and the weight cache worked by hand.
#include <gtest/gtest.h>

#include <string>

#include "models/memory_model.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::CollectiveType;

// One node of 8 H100s; 2 blocks of hidden 1024 (ffn 4096, SwiGLU, no bias), 512 tokens a
// micro-batch of 1 sequence.
constexpr double kH = 1024, kSeq = 512, kTopK = 2;

Scenario parse(const std::string& precision, const std::string& parallel,
               const std::string& moe = "") {
  return parse_scenario(
      "cluster: {nodes: 1, gpus_per_node: 8, gpu: H100-SXM5-80GB,\n"
      "          intra_node: {fabric: nvswitch}, network: {topology: single-switch}}\n"
      "model: {num_layers: 2, hidden_size: 1024, num_heads: 8, ffn_hidden_size: 4096,\n"
      "        vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
      "        learned_positions: false" +
          (moe.empty() ? std::string() : ",\n        moe: {" + moe + "}") +
          "}\n"
          "training: {global_batch: 8, micro_batch: 1, seq_len: 512, precision: " +
          precision +
          "}\n"
          "parallel: " +
          parallel + "\n",
      "fp8.yaml");
}

std::uint64_t bytes_of(const engine::Schedule& s, const std::string& label) {
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op) == label) return op.bytes;
  ADD_FAILURE() << "no op '" << label << "' on rank 0";
  return 0;
}

// Sequence parallelism over tp 8: the all-gather before the QKV GEMM carries the whole b·s·h
// (= 512 · 1024 elements), 2 bytes each under bf16 and 1 under fp8 (Transformer Engine
// quantizes the norm output before gathering it), fp8_comm or not; the reduce-scatter after the
// output projection stays 2 bytes an element in backward, and in forward unless fp8_comm
// (userbuffers' fp8 buffers).
TEST(Fp8, SequenceParallelAllGathersCarryTheFp8GemmInput) {
  const std::string sp = "{tp: 8, sequence_parallel: true";
  const auto bf16 = build_schedule(parse("bf16", sp + "}"));
  const auto fp8 = build_schedule(parse("fp8", sp + "}"));
  const auto comm = build_schedule(parse("fp8", sp + ", fp8_comm: true}"));
  const std::string gather = "L0.attn fwd tp all_gather mb0";
  const std::string scatter = "L0.attn fwd tp reduce_scatter mb0";
  const auto elems = static_cast<std::uint64_t>(kSeq * kH);
  EXPECT_EQ(bytes_of(bf16.schedule, gather), 2 * elems);
  EXPECT_EQ(bytes_of(fp8.schedule, gather), elems);
  EXPECT_EQ(bytes_of(comm.schedule, gather), elems);
  EXPECT_EQ(bytes_of(fp8.schedule, scatter), 2 * elems);
  EXPECT_EQ(bytes_of(comm.schedule, scatter), elems);
  EXPECT_EQ(bytes_of(comm.schedule, "L0.attn bwd tp reduce_scatter mb0"), 2 * elems);
  EXPECT_EQ(bytes_of(comm.schedule, "L0.attn bwd tp all_gather mb0"), elems);
}

// An expert all-to-all carries the 512 · top-2 routed token copies of h elements. With
// fp8_comm, DeepSeek-V3's split: the forward dispatch and the backward combine-grad (into the
// experts' down-projection) in fp8, the forward combine and backward dispatch-grad in bf16.
TEST(Fp8, TheMoeDispatchIsFp8AndTheCombineBf16WithFp8Comm) {
  const std::string moe = "num_experts: 8, top_k: 2, expert_ffn_hidden_size: 2048";
  const auto fp8 = build_schedule(parse("fp8", "{ep: 8}", moe));
  const auto comm = build_schedule(parse("fp8", "{ep: 8, fp8_comm: true}", moe));
  const auto copies = static_cast<std::uint64_t>(kSeq * kTopK * kH);
  for (const char* label :
       {"L0.mlp fwd ep dispatch all_to_all mb0", "L0.mlp fwd ep combine all_to_all mb0",
        "L0.mlp bwd ep combine-grad all_to_all mb0", "L0.mlp bwd ep dispatch-grad all_to_all mb0"})
    EXPECT_EQ(bytes_of(fp8.schedule, label), 2 * copies) << label;
  EXPECT_EQ(bytes_of(comm.schedule, "L0.mlp fwd ep dispatch all_to_all mb0"), copies);
  EXPECT_EQ(bytes_of(comm.schedule, "L0.mlp fwd ep combine all_to_all mb0"), 2 * copies);
  EXPECT_EQ(bytes_of(comm.schedule, "L0.mlp bwd ep combine-grad all_to_all mb0"), copies);
  EXPECT_EQ(bytes_of(comm.schedule, "L0.mlp bwd ep dispatch-grad all_to_all mb0"), 2 * copies);
}

// Data parallelism over 8 ranks: DDP all-reduces every gradient in bf16 under fp8 (2 bytes a
// parameter, as under bf16, never 1); FSDP gathers parameters at 2 bytes, or 1 with fp8_comm,
// and reduce-scatters gradients at 2 either way.
TEST(Fp8, GradientsAreReducedInBf16AndParametersGatheredInFp8OnlyWithFp8Comm) {
  auto dp_bytes = [](const Scenario& sc, CollectiveType type) {
    const auto built = build_schedule(sc);
    std::uint64_t total = 0;
    for (const auto& op : built.schedule.ops)
      if (op.rank == 0 && op.category == Category::dp_comm && op.collective == type)
        total += op.bytes;
    return total;
  };
  const std::uint64_t bf16 = dp_bytes(parse("bf16", "{}"), CollectiveType::all_reduce);
  ASSERT_GT(bf16, 0u);
  EXPECT_EQ(dp_bytes(parse("fp8", "{}"), CollectiveType::all_reduce), bf16);
  const Scenario fsdp = parse("fp8", "{data_parallel: fsdp}");
  const Scenario fsdp_comm = parse("fp8", "{data_parallel: fsdp, fp8_comm: true}");
  const std::uint64_t gathered = dp_bytes(fsdp, CollectiveType::all_gather);
  ASSERT_GT(gathered, 0u);
  EXPECT_EQ(gathered % 2, 0u);
  EXPECT_EQ(dp_bytes(fsdp_comm, CollectiveType::all_gather), gathered / 2);
  EXPECT_EQ(dp_bytes(fsdp_comm, CollectiveType::reduce_scatter),
            dp_bytes(fsdp, CollectiveType::reduce_scatter));
}

// DDP keeps whole bf16 weights under fp8 (2 bytes a parameter) and Transformer Engine's cached
// fp8 casts and transposes of the block GEMM weights: 2 more bytes per block parameter. A block
// here: attention 4·h² (q, k, v, o with 8 KV heads = MHA) + SwiGLU 3·h·4096, plus two RMSNorm
// weights of h: 4·1024² + 3·1024·4096 + 2·1024 = 16,779,264; two blocks 33,558,528 · 2 bytes.
TEST(Fp8, DdpWeightsAreBf16PlusTheBlocksFp8Cache) {
  const double bf16 = estimate_memory_only(parse("bf16", "{}")).peak.weights;
  const double fp8 = estimate_memory_only(parse("fp8", "{}")).peak.weights;
  EXPECT_DOUBLE_EQ(fp8 - bf16, 2.0 * 2 * (4 * kH * kH + 3 * kH * 4096 + 2 * kH));
  // FSDP casts as it gathers: no cache.
  EXPECT_DOUBLE_EQ(estimate_memory_only(parse("fp8", "{data_parallel: fsdp}")).peak.weights,
                   estimate_memory_only(parse("bf16", "{data_parallel: fsdp}")).peak.weights);
}

TEST(Fp8, Fp8CommWithoutFp8TrainingIsAnErrorOnTheKey) {
  try {
    parse("bf16", "{fp8_comm: true}");
    FAIL() << "fp8_comm accepted under bf16";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.fp8_comm: fp8 communication needs fp8 "
                                         "training (training.precision: fp8), not bf16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clustersim::models
