// Multi-head latent attention and DeepSeek's MoE layout (docs/parallelism.md "Latent attention"):
// the presets' and the config.json reader's parameter counts against the published totals, worked
// by hand from the published shapes; the attention FLOPs and the kernels' GEMM shapes under TP.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <variant>

#include "models/kernels/transformer_kernels.hpp"
#include "models/model_costs.hpp"
#include "models/model_spec.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

const ModelSpec& preset(const char* name) {
  const ModelSpec* m = find_model(name);
  EXPECT_NE(m, nullptr) << name;
  return *m;
}

// Per block, by hand (h hidden, H heads, latents q and kv = 512, head widths nope 128, rope 64,
// v 128): attention h·q + q (norm) + q·H·192 (or h·H·192 without a q latent) + h·576 + 512 +
// 512·H·256 + H·128·h + h (norm); a dense MLP 3·h·ffn + h; an MoE MLP (E + shared)·3·h·f_e +
// E·h (router) + h. Plus 2·V·h (untied embedding and head) and h (final norm).
//  DeepSeek-V2-Lite: 27 × 13,765,120 + 67,241,984 + 26 × 571,082,752 + 419,430,400 + 2,048
//                    = 15,706,484,224 (published: 15.7 B)
//  DeepSeek-V2: 60 × 149,232,640 + 188,748,800 + 59 × 3,822,883,840 + 1,048,576,000 + 5,120
//               = 235,741,434,880 (published: 236 B)
//  DeepSeek-V3: 61 × 187,114,496 + 3 × 396,368,896 + 58 × 11,320,171,520 + 1,853,358,080
//               + 7,168 = 671,026,404,352 (published: 671 B; V3's router bias, 256 a block, and
//               its multi-token-prediction module are not counted)
TEST(LatentAttention, PresetsHaveThePublishedTotals) {
  EXPECT_DOUBLE_EQ(total_params(expand_model(preset("deepseek-v2-lite"), 4096)), 15'706'484'224.0);
  EXPECT_DOUBLE_EQ(total_params(expand_model(preset("deepseek-v2"), 4096)), 235'741'434'880.0);
  EXPECT_DOUBLE_EQ(total_params(expand_model(preset("deepseek-v3"), 4096)), 671'026'404'352.0);
}

std::string write(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "clustersim_mla";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

// deepseek-ai/DeepSeek-V3 and DeepSeek-V2-Lite config.json (the keys that matter; V2-Lite's
// q_lora_rank is null: queries are projected directly).
TEST(LatentAttention, DeepSeekConfigsReadAsThePresets) {
  const ModelSpec v3 = read_hf_config(write("v3.json", R"({
    "model_type": "deepseek_v3", "hidden_act": "silu", "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "vocab_size": 129280,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_nextn_predict_layers": 1,
    "tie_word_embeddings": false})"));
  const auto& t = std::get<TransformerSpec>(v3.body);
  ASSERT_TRUE(t.mla && t.moe);
  EXPECT_EQ(t.mla->q_lora_rank, 1536);
  EXPECT_EQ(t.moe->shared_experts, 1);
  EXPECT_EQ(t.moe->first_dense, 3);
  EXPECT_EQ(t.num_kv_heads, 128);
  EXPECT_DOUBLE_EQ(total_params(expand_model(v3, 4096)), 671'026'404'352.0);

  const ModelSpec lite = read_hf_config(write("lite.json", R"({
    "model_type": "deepseek_v2", "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_attention_heads": 16,
    "num_hidden_layers": 27, "num_key_value_heads": 16, "vocab_size": 102400,
    "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "first_k_dense_replace": 1, "moe_layer_freq": 1})"));
  EXPECT_EQ(std::get<TransformerSpec>(lite.body).mla->q_lora_rank, 0);
  EXPECT_DOUBLE_EQ(total_params(expand_model(lite, 4096)), 15'706'484'224.0);
}

TEST(LatentAttention, ALatentKeyWithoutTheKeyValueLatentIsRefused) {
  const auto path = write("half.json", R"({"model_type": "deepseek_v3", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "q_lora_rank": 16})");
  try {
    read_hf_config(path);
    ADD_FAILURE() << "accepted";
  } catch (const ModelSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_lora_rank"), std::string::npos) << e.what();
  }
}

// DeepSeek-V3's attention forward per sequence of s = 4096: 2·s·(projection MACs) + 2·s²·H·(192 +
// 128). MACs per token: 7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168 =
// 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 + 117,440,512 = 187,105,280.
TEST(LatentAttention, AttentionFlopsCountTheLatentProjections) {
  const auto layers = expand_model(preset("deepseek-v3"), 4096);
  const double s = 4096;
  int found = 0;
  for (const auto& l : layers) {
    if (l.name != "L0.attn") continue;
    ++found;
    EXPECT_DOUBLE_EQ(l.forward_flops, 2 * s * 187'105'280.0 + 2 * s * s * 128 * (192 + 128));
  }
  EXPECT_EQ(found, 1);
}

// With tp 8 a rank holds 16 of the 128 heads: the up-projections and the output projection are
// split by 8, the down-projections are not (every rank projects the latents). Flash attention
// multiplies 16 heads of s × s (causal: half) over 192 (Q·Kᵀ) and 128 (P·V).
TEST(LatentAttention, KernelsSplitTheHeadsButNotTheLatents) {
  using kernels::Pass;
  auto c =
      kernels::kernel_config(std::get<TransformerSpec>(preset("deepseek-v3").body), 1, 4096, 8);
  c.attention = kernels::AttentionImpl::flash;
  engine::KernelTable names;
  const auto list = kernels::attention_block_kernels(c, Pass::forward, names);
  std::map<std::string, engine::Kernel> by_name;
  for (const auto& k : list)
    by_name[names.name_of(k.name)] = k;
  auto expect_gemm = [&](const std::string& name, std::uint64_t n, std::uint64_t k) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_EQ(by_name[name].m, 4096u) << name;
    EXPECT_EQ(by_name[name].n, n) << name;
    EXPECT_EQ(by_name[name].k, k) << name;
  };
  expect_gemm("attn.q_down.fprop", 1536, 7168);
  expect_gemm("attn.q_up.fprop", 16 * 192, 1536);
  expect_gemm("attn.kv_down.fprop", 512 + 64, 7168);
  expect_gemm("attn.kv_up.fprop", 16 * (128 + 128), 512);
  expect_gemm("attn.proj.fprop", 7168, 16 * 128);
  EXPECT_FALSE(by_name.count("attn.qkv.fprop"));
  ASSERT_TRUE(by_name.count("attn.flash.fwd"));
  EXPECT_DOUBLE_EQ(by_name["attn.flash.fwd"].flops, 2.0 * 16 * 4096 * 4096 * (192 + 128) / 2);
}

// DeepSeek-V2-Lite on one DGX H100 with ep 8 simulates; its executed FLOPs a rank are the model
// FLOPs' share (no recompute), so MFU and TFLOP/s agree.
TEST(LatentAttention, DeepSeekV2LiteRunsWithExpertParallelism) {
  const Scenario sc = parse_scenario(
      "cluster: {nodes: 1, node: dgx-h100}\n"
      "model: deepseek-v2-lite\n"
      "training: {global_batch: 16, micro_batch: 1, seq_len: 4096, precision: bf16}\n"
      "parallel: {ep: 8, data_parallel: zero1}\n",
      "lite.yaml");
  const auto run = run_scenario(sc);
  EXPECT_GT(run.result.iteration_time_s, 0.0);
  EXPECT_GT(run.result.mfu, 0.0);
  EXPECT_LT(run.result.mfu, 1.0);
}

TEST(LatentAttention, ScenarioKeysAreChecked) {
  const std::string base =
      "cluster: {nodes: 1, node: dgx-h100}\n"
      "training: {global_batch: 8, micro_batch: 1, seq_len: 512}\n";
  try {
    parse_scenario(base +
                       "model: {num_layers: 2, hidden_size: 256, num_heads: 4, vocab_size: 100,\n"
                       "        mla: {kv_lora_rank: 64, qk_nope_head_dim: 32, v_head_dim: 32}}\n",
                   "bad.yaml");
    ADD_FAILURE() << "accepted without qk_rope_head_dim";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("qk_rope_head_dim"), std::string::npos) << e.what();
  }
  try {
    parse_scenario(base + "model: {preset: deepseek-v2-lite, num_kv_heads: 4}\n", "bad.yaml");
    ADD_FAILURE() << "accepted num_kv_heads with latent attention";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("model.num_kv_heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim::models
