// Model costing against published parameter counts and the closed-form FLOP and activation
// formulas of Narayanan et al. 2021 (Megatron-LM) and Korthikanti et al. 2022.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/model_costs.hpp"
#include "models/model_spec.hpp"

namespace clustersim::models {
namespace {

std::vector<LayerCost> expand(const char* preset, int seq_len) {
  const ModelSpec* m = find_model(preset);
  if (m == nullptr) throw std::runtime_error(std::string("no model preset ") + preset);
  return expand_model(*m, seq_len);
}

double params(const char* preset) {
  return total_params(expand(preset, 128));
}

const LayerCost& layer(const std::vector<LayerCost>& layers, const std::string& name) {
  for (const auto& l : layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

double sum(const std::vector<LayerCost>& layers, double LayerCost::*field) {
  double s = 0;
  for (const auto& l : layers)
    s += l.*field;
  return s;
}

// Hugging Face `model.num_parameters()` of the released checkpoints (exact integers).
TEST(ModelCosts, PublishedParameterCounts) {
  EXPECT_DOUBLE_EQ(params("gpt2-xl"), 1'557'611'200.0);
  EXPECT_DOUBLE_EQ(params("llama2-7b"), 6'738'415'616.0);
  EXPECT_DOUBLE_EQ(params("llama2-70b"), 68'976'648'192.0);
  EXPECT_DOUBLE_EQ(params("llama3-8b"), 8'030'261'248.0);
  EXPECT_DOUBLE_EQ(params("llama3-70b"), 70'553'706'496.0);
  EXPECT_DOUBLE_EQ(params("llama3-405b"), 405'853'388'800.0);
  EXPECT_DOUBLE_EQ(params("mixtral-8x7b"), 46'702'792'704.0);
  // BertModel (bert-large-uncased) has 335,141,888 parameters; ours leaves out the pooler
  // (1024² + 1024, used only by the NSP/classification head) and the 2×1024 token-type table.
  EXPECT_DOUBLE_EQ(params("bert-large"), 335'141'888.0 - (1024.0 * 1024 + 1024) - 2 * 1024);
}

// GPT-3 175B with Megatron's padded vocabulary: 12·l·h² + 13·l·h per block (weights and biases,
// two LayerNorms), (V + positions)·h embeddings, a final LayerNorm, tied LM head. The paper's
// "175.0B" uses V = 50257; at V = 51200 it is ≈ 174.6 B.
TEST(ModelCosts, Gpt3ParametersFollowTheClosedForm) {
  const double l = 96, h = 12288, v = 51200, p = 2048;
  const double expected = 12 * l * h * h + 13 * l * h + (v + p) * h + 2 * h;
  EXPECT_DOUBLE_EQ(params("gpt3-175b"), expected);
  EXPECT_NEAR(params("gpt3-175b"), 174.6e9, 0.05e9);
}

// torchvision's resnet50 (IMAGENET1K_V1): 25,557,032 parameters, 4.09 GFLOPS as multiply-adds.
TEST(ModelCosts, Resnet50MatchesTorchvision) {
  const auto layers = expand("resnet50", 0);
  ASSERT_EQ(layers.size(), 18u);  // conv1, 3 + 4 + 6 + 3 bottlenecks, fc
  EXPECT_EQ(layers.front().name, "conv1");
  EXPECT_EQ(layers[1].name, "layer1.0");
  EXPECT_EQ(layers[16].name, "layer4.2");
  EXPECT_EQ(layers.back().name, "fc");
  EXPECT_DOUBLE_EQ(total_params(layers), 25'557'032.0);
  const double macs = sum(layers, &LayerCost::forward_flops) / 2;
  EXPECT_NEAR(macs, 4.09e9, 0.005e9);  // the published figure, rounded to 3 digits
  // The fc alone: 2048 × 1000 weights + 1000 biases, 2048 × 1000 multiply-adds.
  EXPECT_DOUBLE_EQ(layers.back().params, 2048.0 * 1000 + 1000);
  EXPECT_DOUBLE_EQ(layers.back().forward_flops, 2 * 2048.0 * 1000);
  // conv1 keeps at least its 3×224×224 input and 64×112×112 output in 16 bits.
  EXPECT_GT(layers.front().activation_bytes, 2 * (3.0 * 224 * 224 + 64.0 * 112 * 112));
}

// Forward FLOPs of a GPT block: 24·s·h² + 4·s²·h (Narayanan et al. 2021, §5.1), logits 2·s·h·V.
TEST(ModelCosts, GptForwardFlopsPerBlockAndLogits) {
  const double s = 1024, h = 1600, v = 50257;
  const auto layers = expand("gpt2-xl", 1024);
  ASSERT_EQ(layers.size(), 2u + 2 * 48);
  EXPECT_EQ(layers[0].name, "embedding");
  EXPECT_EQ(layers.back().name, "lm_head");
  EXPECT_EQ(layer(layers, "embedding").forward_flops, 0.0);
  for (int k : {0, 47}) {
    const auto& attn = layer(layers, "L" + std::to_string(k) + ".attn");
    const auto& mlp = layer(layers, "L" + std::to_string(k) + ".mlp");
    EXPECT_EQ(attn.block, k);
    EXPECT_DOUBLE_EQ(attn.forward_flops + mlp.forward_flops, 24 * s * h * h + 4 * s * s * h);
    EXPECT_DOUBLE_EQ(mlp.forward_flops, 16 * s * h * h);  // two matmuls h × 4h
  }
  EXPECT_DOUBLE_EQ(layer(layers, "lm_head").forward_flops, 2 * s * h * v);
  for (const auto& l : layers)
    EXPECT_DOUBLE_EQ(l.backward_flops, 2 * l.forward_flops) << l.name;
}

// Megatron-LM's count for one iteration, forward and backward without recomputation:
// 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) (Narayanan et al. 2021, eq. 3 less the recompute pass).
TEST(ModelCosts, MegatronIterationFlops) {
  const double b = 1, s = 2048, l = 96, h = 12288, v = 51200;
  const double expected = 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  const auto layers = expand("gpt3-175b", 2048);
  const double total =
      sum(layers, &LayerCost::forward_flops) + sum(layers, &LayerCost::backward_flops);
  EXPECT_NEAR(total, expected, expected * 1e-12);
}

// Korthikanti et al. 2022, §4.1: s·b·h·(34 + 5·a·s/h) bytes per block (16-bit, no recompute);
// the paper's extra terms: embedding dropout mask s·h, the output LayerNorm and projection inputs
// 4·s·h, fp32 logits 4·s·V.
TEST(ModelCosts, KorthikantiActivationsOfGpt3) {
  const double s = 2048, h = 12288, a = 96, v = 51200;
  const auto layers = expand("gpt3-175b", 2048);
  for (int k : {0, 95}) {
    const double block = layer(layers, "L" + std::to_string(k) + ".attn").activation_bytes +
                         layer(layers, "L" + std::to_string(k) + ".mlp").activation_bytes;
    EXPECT_DOUBLE_EQ(block, s * h * (34 + 5 * a * s / h));
  }
  EXPECT_DOUBLE_EQ(layer(layers, "L3.attn").activation_bytes, 13 * s * h + 5 * a * s * s);
  EXPECT_DOUBLE_EQ(layer(layers, "L3.mlp").activation_bytes, 21 * s * h);
  EXPECT_DOUBLE_EQ(layer(layers, "embedding").activation_bytes, s * h);
  EXPECT_DOUBLE_EQ(layer(layers, "lm_head").activation_bytes, 4 * s * h + 4 * s * v);
}

// Llama 2 7B: no GQA (kv = a), SwiGLU. Korthikanti's MLP ffn terms (16·s·h at f = 4h) scale by
// f/(4h) and by 1.5 for the gate/up/product triple; the other 5·s·h stay.
TEST(ModelCosts, SwigluScalesTheMlpTerms) {
  const double s = 4096, h = 4096, f = 11008;
  const auto layers = expand("llama2-7b", 4096);
  const auto& mlp = layer(layers, "L0.mlp");
  EXPECT_DOUBLE_EQ(mlp.activation_bytes, 5 * s * h + 16 * s * h * (f / (4 * h)) * 1.5);
  EXPECT_DOUBLE_EQ(mlp.forward_flops, 3 * 2 * s * h * f);  // gate, up, down
  // Tensors of a Llama block: RMSNorm weight, q/k/v fused, o; norm, gate, up, down; no biases.
  std::vector<std::string> names;
  for (const auto& t : mlp.tensors)
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"L0.mlp.norm.weight", "L0.mlp.gate.weight",
                                             "L0.mlp.up.weight", "L0.mlp.down.weight"}));
  EXPECT_EQ(layer(layers, "L0.attn").tensors.size(), 3u);
}

// GQA: Llama 3 8B projects K and V to 8 × 128 = 1024 columns each.
TEST(ModelCosts, GroupedQueryAttentionFlops) {
  const double s = 8192, h = 4096, kv = 1024;
  const auto layers = expand("llama3-8b", 8192);
  EXPECT_DOUBLE_EQ(layer(layers, "L5.attn").forward_flops,
                   2 * s * h * (h + 2 * kv) + 2 * s * h * h + 4 * s * s * h);
}

// Mixtral: 12.9 B active parameters per token (Jiang et al. 2024). The forward pass, less the
// attention-score FLOPs (4·s²·h per layer), costs 2 FLOPs per token per active parameter; the
// embedding table (V·h = 131 M) does no matmul.
TEST(ModelCosts, MixtralForwardFlopsFollowActiveParameters) {
  const double s = 4096, h = 4096, l = 32, v = 32000;
  const auto layers = expand("mixtral-8x7b", 4096);
  const double matmul = sum(layers, &LayerCost::forward_flops) - l * 4 * s * s * h;
  EXPECT_NEAR(matmul / (2 * s), 12.9e9 - v * h, 0.05e9);
  // Each MoE layer stores 8 experts of 3 matrices plus the router and the norm.
  EXPECT_EQ(layer(layers, "L0.mlp").tensors.size(), 1u + 1 + 8 * 3);
}

TEST(ModelCosts, MoeEveryNthLayerAndSharedExperts) {
  TransformerSpec t;
  t.num_layers = 4;
  t.hidden_size = 64;
  t.num_heads = 4;
  t.num_kv_heads = 4;
  t.ffn_hidden_size = 256;
  t.vocab_size = 100;
  t.moe = MoeSpec{4, 1, 2, 128, 1, 1.0, 1.0};
  const auto layers = expand_model(ModelSpec{"tiny", t, 0, {}}, 16);
  const double s = 16, h = 64;
  // Blocks 0 and 2 are MoE: router 2·s·h·E, then top-1 + 1 shared GeLU expert of 128.
  const double moe = 2 * s * h * 4 + 2 * (2 * s * h * 128 * 2);
  const double dense = 2 * s * h * 256 * 2;
  EXPECT_DOUBLE_EQ(layer(layers, "L0.mlp").forward_flops, moe);
  EXPECT_DOUBLE_EQ(layer(layers, "L1.mlp").forward_flops, dense);
  EXPECT_DOUBLE_EQ(layer(layers, "L2.mlp").forward_flops, moe);
  EXPECT_DOUBLE_EQ(layer(layers, "L3.mlp").forward_flops, dense);
  // Parameters of a MoE block: LayerNorm 2h, router h·E, 5 experts (4 routed + 1 shared) of
  // fc1 (h·f + f) and fc2 (f·h + h).
  EXPECT_DOUBLE_EQ(layer(layers, "L0.mlp").params, 2 * h + h * 4 + 5 * (2 * h * 128 + 128 + h));
}

TEST(ModelCosts, TiedHeadHasNoWeightButStillItsFlops) {
  const auto layers = expand("gpt2-xl", 1024);
  const auto& head = layer(layers, "lm_head");
  EXPECT_DOUBLE_EQ(head.params, 2 * 1600.0);  // the final LayerNorm only
  EXPECT_GT(head.forward_flops, 0.0);
  // Learned positions: word and position tables.
  EXPECT_DOUBLE_EQ(layer(layers, "embedding").params, (50257.0 + 1024) * 1600);
}

TEST(ModelCosts, LayerListRepeatsAndBackwardDefault) {
  const std::vector<LayerSpec> list = {{"stem", 10, 100, -1, 8, 1}, {"block", 5, 50, 70, 4, 3}};
  const auto layers = expand_model(ModelSpec{"custom", list, 0, {}}, 0);
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0].name, "stem");
  EXPECT_EQ(layers[1].name, "block[0]");
  EXPECT_EQ(layers[3].name, "block[2]");
  EXPECT_DOUBLE_EQ(layers[0].backward_flops, 200);  // twice the forward
  EXPECT_DOUBLE_EQ(layers[2].backward_flops, 70);   // stated
  EXPECT_DOUBLE_EQ(layers[2].activation_bytes, 4);
  EXPECT_DOUBLE_EQ(total_params(layers), 10 + 3 * 5);
}

TEST(ModelCosts, BadInputIsRejectedWithItsName) {
  const std::vector<LayerSpec> zero_repeat = {{"conv", 1, 1, -1, 1, 0}};
  try {
    expand_model(ModelSpec{"bad", zero_repeat, 0, {}}, 0);
    FAIL() << "repeat 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("conv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("repeat"), std::string::npos) << e.what();
  }
  EXPECT_THROW(expand("llama3-8b", 0), std::invalid_argument);
  TransformerSpec t = std::get<TransformerSpec>(find_model("llama3-8b")->body);
  t.num_kv_heads = 5;  // does not divide 32
  EXPECT_THROW(expand_model(ModelSpec{"x", t, 0, {}}, 16), std::invalid_argument);
}

// ---- Hugging Face config.json ----

class HfConfigTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::path(::testing::TempDir()) / "clustersim_hf" /
                     ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Asserts read_hf_config throws ModelSpecError whose message contains every `needles`.
  static void expect_error(const std::string& path, std::vector<std::string> needles) {
    try {
      read_hf_config(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const ModelSpecError& e) {
      for (const auto& n : needles)
        EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << " lacks " << n;
    }
  }
};

// meta-llama/Meta-Llama-3-8B config.json (the keys that matter).
TEST_F(HfConfigTest, LlamaStyle) {
  const auto path = write("config.json", R"({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 8192, "tie_word_embeddings": false, "rms_norm_eps": 1e-05})");
  const ModelSpec m = read_hf_config(path);
  const auto& t = std::get<TransformerSpec>(m.body);
  EXPECT_EQ(t.activation, Activation::swiglu);
  EXPECT_EQ(t.norm, Norm::rmsnorm);
  EXPECT_FALSE(t.bias);
  EXPECT_FALSE(t.learned_positions);
  EXPECT_EQ(t.num_kv_heads, 8);
  EXPECT_DOUBLE_EQ(total_params(expand_model(m, 128)), 8'030'261'248.0);  // as published
}

// openai-community/gpt2-xl config.json: GPT-2 key names, n_inner null (4h), tied by default.
TEST_F(HfConfigTest, Gpt2Style) {
  const auto path = write("config.json", R"({
    "model_type": "gpt2", "activation_function": "gelu_new", "n_ctx": 1024, "n_embd": 1600,
    "n_head": 25, "n_inner": null, "n_layer": 48, "n_positions": 1024, "vocab_size": 50257})");
  const ModelSpec m = read_hf_config(path);
  const auto& t = std::get<TransformerSpec>(m.body);
  EXPECT_EQ(t.ffn_hidden_size, 6400);
  EXPECT_EQ(t.activation, Activation::gelu);
  EXPECT_TRUE(t.tied_embeddings);
  EXPECT_TRUE(t.learned_positions);
  EXPECT_EQ(t.max_positions, 1024);
  EXPECT_DOUBLE_EQ(total_params(expand_model(m, 128)), 1'557'611'200.0);
}

// mistralai/Mixtral-8x7B-v0.1 config.json.
TEST_F(HfConfigTest, MixtralStyle) {
  const auto path = write("config.json", R"({
    "model_type": "mixtral", "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "vocab_size": 32000, "tie_word_embeddings": false})");
  const ModelSpec m = read_hf_config(path);
  const auto& t = std::get<TransformerSpec>(m.body);
  ASSERT_TRUE(t.moe.has_value());
  EXPECT_EQ(t.moe->num_experts, 8);
  EXPECT_EQ(t.moe->top_k, 2);
  EXPECT_EQ(t.moe->expert_ffn_hidden_size, 14336);
  EXPECT_DOUBLE_EQ(total_params(expand_model(m, 128)), 46'702'792'704.0);
}

// Dense layers at listed positions (Qwen-MoE's mlp_only_layers) are refused rather than read as
// MoE layers. (DeepSeek's latent attention is read: tests/models/test_mla.cpp.)
TEST_F(HfConfigTest, ListedDenseLayersAreRefusedNotMisread) {
  const auto qwen = write("qwen.json", R"({"model_type": "qwen2_moe", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 16, "mlp_only_layers": [1]})");
  expect_error(qwen, {qwen, "mlp_only_layers"});
}

// Qwen/Qwen1.5-MoE-A2.7B config.json: 60 experts of 1408, top 4, a shared expert of 5632 = four
// routed-size experts. By hand, per block: attention 4·2048² = 16,777,216 (plus q, k, v biases,
// 3·2048, which the transformer map does not count: docs/scenario.md), router 60·2048, 64
// expert-sized MLPs of 3·2048·1408 (8,650,752 each), two RMSNorms of 2048: 16,777,216 + 122,880
// + 553,648,128 + 4,096 = 570,552,320; 24 blocks 13,693,255,680; untied embedding and head
// 2·151936·2048 = 622,329,856 and the final norm 2048: 14,315,587,584; with the q, k, v biases
// (24·3·2048 = 147,456) 14,315,735,040, the model card's "14.3B parameters in total"
// (huggingface.co/Qwen/Qwen1.5-MoE-A2.7B, README); the shared expert's gate the map leaves out is
// 24·2048 = 49,152 more.
TEST_F(HfConfigTest, QwenMoeSharedExpert) {
  const auto path = write("config.json", R"({
    "model_type": "qwen2_moe", "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_hidden_layers": 24, "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false})");
  const ModelSpec m = read_hf_config(path);
  const auto& t = std::get<TransformerSpec>(m.body);
  ASSERT_TRUE(t.moe.has_value());
  EXPECT_EQ(t.moe->num_experts, 60);
  EXPECT_EQ(t.moe->shared_experts, 4);
  EXPECT_EQ(t.moe->every, 1);
  const double params = total_params(expand_model(m, 128));
  EXPECT_DOUBLE_EQ(params, 14'315'735'040.0);
  EXPECT_NEAR(params / 1e9, 14.3, 0.05);  // as published, to its one decimal
  const auto odd = write("odd.json", R"({"model_type": "qwen2_moe", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 16, "shared_expert_intermediate_size": 24})");
  expect_error(odd, {odd, "shared_expert_intermediate_size", "multiple"});
}

// Qwen/Qwen2.5-7B config.json: 28 blocks of hidden 3584, 28 heads with 4 KV heads (kv width 512),
// SwiGLU of 18944, vocab 152064, untied. A block: q and o 3584² each, k and v 3584·512 each, the
// MLP 3·3584·18944, two RMSNorms 2·3584, and Qwen2's q, k, v biases 3584 + 2·512 = 4,608:
// 233,057,792; 28 blocks 6,525,618,176, embedding and head 2·152064·3584 = 1,089,994,752, final
// norm 3584: 7,615,616,512, the model card's "Number of Parameters: 7.61B"; without the biases
// the count would be 129,024 short. Qwen3 drops them (attention_bias false).
TEST_F(HfConfigTest, Qwen2CarriesQkvBiases) {
  const std::string body = R"("hidden_act": "silu", "hidden_size": 3584,
    "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
    "num_hidden_layers": 28, "vocab_size": 152064, "tie_word_embeddings": false})";
  const ModelSpec qwen2 = read_hf_config(write("qwen2.json", R"({"model_type": "qwen2", )" + body));
  EXPECT_TRUE(std::get<TransformerSpec>(qwen2.body).qkv_bias);
  EXPECT_DOUBLE_EQ(total_params(expand_model(qwen2, 128)), 7'615'616'512.0);
  const ModelSpec qwen3 = read_hf_config(write("qwen3.json", R"({"model_type": "qwen3", )" + body));
  EXPECT_FALSE(std::get<TransformerSpec>(qwen3.body).qkv_bias);
  EXPECT_DOUBLE_EQ(total_params(expand_model(qwen3, 128)), 7'615'616'512.0 - 28 * 4608);
}

// google-bert/bert-large-uncased config.json: an encoder (attends both ways), GELU, LayerNorm,
// biases, 512 learned positions, the MLM head tied to the word embeddings. Hugging Face's
// BertModel has 335,141,888 parameters; the pooler (1024² + 1024) and the 2 × 1024 token-type
// table train no MLM token, so the map leaves them out: 335,141,888 − 1,049,600 − 2,048 =
// 334,090,240, the bert-large preset's count (docs/presets.md).
TEST_F(HfConfigTest, BertStyle) {
  const auto path = write("config.json", R"({
    "architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_act": "gelu",
    "hidden_size": 1024, "intermediate_size": 4096, "max_position_embeddings": 512,
    "num_attention_heads": 16, "num_hidden_layers": 24, "type_vocab_size": 2,
    "vocab_size": 30522})");
  const ModelSpec m = read_hf_config(path);
  const auto& t = std::get<TransformerSpec>(m.body);
  EXPECT_FALSE(t.causal);
  EXPECT_EQ(t.activation, Activation::gelu);
  EXPECT_EQ(t.norm, Norm::layernorm);
  EXPECT_TRUE(t.bias);
  EXPECT_TRUE(t.tied_embeddings);
  EXPECT_EQ(t.max_positions, 512);
  EXPECT_DOUBLE_EQ(total_params(expand_model(m, 512)), 335'141'888.0 - 1'049'600.0 - 2'048.0);
  EXPECT_DOUBLE_EQ(total_params(expand_model(*find_model("bert-large"), 512)),
                   total_params(expand_model(m, 512)));
}

TEST_F(HfConfigTest, MissingKeyNamesFileAndKey) {
  const auto path = write(
      "no_hidden.json", R"({"num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})");
  expect_error(path, {path, "hidden_size", "n_embd", "missing"});
}

TEST_F(HfConfigTest, WrongTypeNamesFileAndKey) {
  const auto path = write("string_layers.json", R"({"num_hidden_layers": "32", "hidden_size": 64,
    "num_attention_heads": 2, "vocab_size": 10})");
  expect_error(path, {path, "num_hidden_layers", "positive integer"});
  const auto tie = write("tie.json", R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 2, "vocab_size": 10, "tie_word_embeddings": "yes"})");
  expect_error(tie, {tie, "tie_word_embeddings"});
  const auto act = write("act.json", R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 2, "vocab_size": 10, "hidden_act": "tanh"})");
  expect_error(act, {act, "hidden_act", "tanh", "silu"});
}

TEST_F(HfConfigTest, NotJsonAndMissingFile) {
  const auto path = write("broken.json", "{\"num_hidden_layers\": 2,");
  expect_error(path, {path, "JSON"});
  const auto array = write("array.json", "[1, 2]");
  expect_error(array, {array, "object"});
  const std::string missing = "/nonexistent/dir/config.json";
  expect_error(missing, {missing, "cannot open"});
}

TEST_F(HfConfigTest, HeadCountsMustDivide) {
  const auto path = write("gqa.json", R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 10})");
  expect_error(path, {path, "num_key_value_heads"});
  const auto odd = write("odd.json", R"({"num_hidden_layers": 2, "hidden_size": 65,
    "num_attention_heads": 4, "vocab_size": 10})");
  expect_error(odd, {odd, "hidden_size", "num_attention_heads"});
}

}  // namespace
}  // namespace clustersim::models

namespace clustersim::models {
namespace {

// DeepSeekMoE 16B (Dai et al. 2024, arXiv:2401.06066, Table: "16.4B total, 2.8B activated";
// HF deepseek-ai/deepseek-moe-16b-base config.json). Closed form: embedding and head V·h each, a
// final norm h; per block attention h + 4h² (MHA, no biases); block 0 a dense SwiGLU MLP
// h + 3·h·10944; blocks 1–27 norm h, router h·64 and 64 routed + 2 shared experts of 3·h·1408.
TEST(ModelCosts, DeepSeekMoe16bMatchesThePublishedTotal) {
  const double v = 102400, h = 2048, fe = 1408;
  const double total = 2 * v * h + h + 28 * (h + 4 * h * h) + (h + 3 * h * 10944) +
                       27 * (h + h * 64 + (64 + 2) * 3 * h * fe);
  const auto layers = expand("deepseek-moe-16b", 4096);
  EXPECT_DOUBLE_EQ(total_params(layers), total);
  EXPECT_NEAR(total_params(layers), 16.4e9, 0.05e9);  // the paper's rounded figure
  // Activated per token: 6 routed + 2 shared experts instead of 66: the paper's 2.8 B.
  const double activated = total - 27 * (64 - 6) * 3 * h * fe;
  EXPECT_NEAR(activated, 2.8e9, 0.05e9);
  // The first block is dense (first_k_dense_replace = 1), the others route.
  EXPECT_EQ(layer(layers, "L0.mlp").params, h + 3 * h * 10944);
  EXPECT_EQ(layer(layers, "L1.mlp").params, h + h * 64 + 66 * 3 * h * fe);
}

}  // namespace
}  // namespace clustersim::models

namespace clustersim::models {
namespace {

// The roofline's memory side: a layer list's memory_bytes defaults to what it stores; ResNet-50
// moves three times what it stores (conv writes, batch norm reads and writes, ReLU reads and
// writes, the next conv reads: see resnet50.cpp).
TEST(ModelCosts, MemoryTrafficDefaultsToActivationsAndResnetMovesThreeTimesMore) {
  ModelSpec m;
  m.name = "two";
  LayerSpec plain{"plain", 1e6, 1e9, -1.0, 4e6, 1};
  LayerSpec given{"given", 1e6, 1e9, -1.0, 4e6, 1};
  given.memory_bytes = 1.2e7;
  m.body = std::vector<LayerSpec>{plain, given};
  const auto layers = expand_model(m, 1);
  EXPECT_DOUBLE_EQ(layers[0].memory_bytes, 4e6);
  EXPECT_DOUBLE_EQ(layers[1].memory_bytes, 1.2e7);
  for (const auto& l : expand_model(*find_model("resnet50"), 1))
    EXPECT_DOUBLE_EQ(l.memory_bytes, 3.0 * l.activation_bytes) << l.name;
}

}  // namespace
}  // namespace clustersim::models
