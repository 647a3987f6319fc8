// Model presets (published shapes; docs/presets.md gives each source and parameter count) and the
// Hugging Face config.json reader.
#include "models/model_spec.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/calibration/json_fields.hpp"
#include "models/limits.hpp"

namespace clustersim::models {
namespace detail {
std::vector<LayerSpec> resnet50_layers();  // models/resnet50.cpp
}  // namespace detail

namespace {

TransformerSpec shape(int layers, long hidden, int heads, int kv_heads, long ffn, long vocab,
                      long positions) {
  TransformerSpec t;
  t.num_layers = layers;
  t.hidden_size = hidden;
  t.num_heads = heads;
  t.num_kv_heads = kv_heads;
  t.ffn_hidden_size = ffn;
  t.vocab_size = vocab;
  t.max_positions = positions;
  return t;
}

// GPT-2/GPT-3/BERT: GeLU MLP of 4h, LayerNorm, biases, learned positions, tied LM head.
TransformerSpec gpt_like(int layers, long hidden, int heads, long vocab, long positions) {
  TransformerSpec t = shape(layers, hidden, heads, heads, 4 * hidden, vocab, positions);
  t.activation = Activation::gelu;
  t.norm = Norm::layernorm;
  t.bias = true;
  t.learned_positions = true;
  t.tied_embeddings = true;
  return t;
}

// Llama/Mistral: SwiGLU, RMSNorm, no biases, rotary positions, untied LM head.
TransformerSpec llama_like(int layers, long hidden, int heads, int kv_heads, long ffn, long vocab,
                           long positions) {
  TransformerSpec t = shape(layers, hidden, heads, kv_heads, ffn, vocab, positions);
  t.activation = Activation::swiglu;
  t.norm = Norm::rmsnorm;
  t.bias = false;
  t.learned_positions = false;
  t.tied_embeddings = false;
  return t;
}

// DeepSeek's MoE layout: routed experts of expert_ffn beside `shared` always-on ones, every
// block MoE but the first `dense`.
MoeSpec fine_grained_moe(int experts, int top_k, long expert_ffn, int shared, int dense) {
  MoeSpec e;
  e.num_experts = experts;
  e.top_k = top_k;
  e.expert_ffn_hidden_size = expert_ffn;
  e.shared_experts = shared;
  e.first_dense = dense;
  return e;
}

std::vector<ModelSpec> make_models() {
  std::vector<ModelSpec> m;
  m.push_back({"resnet50", detail::resnet50_layers(), 0, {}});
  // BERT-large (Devlin et al. 2018): 24 layers, 1024, 16 heads, WordPiece 30522, 512 positions.
  m.push_back({"bert-large", gpt_like(24, 1024, 16, 30522, 512), 512, {}});
  std::get<TransformerSpec>(m.back().body).causal = false;  // an encoder: attention sees both ways
  // GPT-2 XL (Radford et al. 2019; HF gpt2-xl config): 48 layers, 1600, 25 heads, 1024 positions.
  m.push_back({"gpt2-xl", gpt_like(48, 1600, 25, 50257, 1024), 1024, {}});
  // GPT-3 175B (Brown et al. 2020, Table 2.1), vocab padded to 51200 as Megatron-LM does.
  m.push_back({"gpt3-175b", gpt_like(96, 12288, 96, 51200, 2048), 2048, {}});
  // Llama 2 (Touvron et al. 2023; HF configs): 4096 context.
  m.push_back({"llama2-7b", llama_like(32, 4096, 32, 32, 11008, 32000, 4096), 4096, {}});
  m.push_back({"llama2-70b", llama_like(80, 8192, 64, 8, 28672, 32000, 4096), 4096, {}});
  // Llama 3 / 3.1 (Dubey et al. 2024, Table 3; HF configs): 8192 pre-training context.
  m.push_back({"llama3-8b", llama_like(32, 4096, 32, 8, 14336, 128256, 8192), 8192, {}});
  m.push_back({"llama3-70b", llama_like(80, 8192, 64, 8, 28672, 128256, 8192), 8192, {}});
  m.push_back({"llama3-405b", llama_like(126, 16384, 128, 8, 53248, 128256, 131072), 8192, {}});
  // Mixtral 8x7B (Jiang et al. 2024; HF config): Mistral-7B attention, 8 experts top-2 per layer.
  TransformerSpec mixtral = llama_like(32, 4096, 32, 8, 14336, 32000, 32768);
  MoeSpec moe;
  moe.num_experts = 8;
  moe.top_k = 2;
  moe.every = 1;
  moe.expert_ffn_hidden_size = 14336;
  mixtral.moe = moe;
  m.push_back({"mixtral-8x7b", mixtral, 4096, {}});
  // DeepSeekMoE 16B (Dai et al. 2024, arXiv:2401.06066; HF deepseek-ai/deepseek-moe-16b-base
  // config.json): 28 layers, hidden 2048, 16 heads (MHA), vocab 102400, 4096 context; fine-grained
  // experts: 64 routed of ffn 1408, top-6, 2 shared; the first block keeps a dense MLP of 10944
  // (first_k_dense_replace = 1). Published total: 16.4 B parameters.
  TransformerSpec deepseek = llama_like(28, 2048, 16, 16, 10944, 102400, 4096);
  deepseek.moe = fine_grained_moe(64, 6, 1408, 2, 1);
  m.push_back({"deepseek-moe-16b", deepseek, 4096, {}});
  // DeepSeek-V2, V2-Lite (arXiv:2405.04434) and V3 (arXiv:2412.19437): multi-head latent
  // attention and fine-grained experts, from the deepseek-ai/DeepSeek-V2, DeepSeek-V2-Lite and
  // DeepSeek-V3 config.json files; pre-trained at 4K tokens. Published totals: 236 B, 15.7 B and
  // 671 B parameters (V3's 14 B multi-token-prediction module is not in the 671 B, nor here).
  auto deepseek_mla = [](int layers, long hidden, int heads, long ffn, long vocab, long q_rank,
                         int experts, int top_k, long expert_ffn, int shared, int dense) {
    TransformerSpec t = llama_like(layers, hidden, heads, heads, ffn, vocab, 163840);
    t.mla = MlaSpec{q_rank, 512, 128, 64, 128};
    t.moe = fine_grained_moe(experts, top_k, expert_ffn, shared, dense);
    return t;
  };
  m.push_back({"deepseek-v2",
               deepseek_mla(60, 5120, 128, 12288, 102400, 1536, 160, 6, 1536, 2, 1),
               4096,
               {}});
  m.push_back({"deepseek-v2-lite",
               deepseek_mla(27, 2048, 16, 10944, 102400, 0, 64, 6, 1408, 2, 1),
               4096,
               {}});
  m.push_back({"deepseek-v3",
               deepseek_mla(61, 7168, 128, 18432, 129280, 1536, 256, 8, 2048, 1, 3),
               4096,
               {}});
  std::sort(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return m;
}

const std::vector<ModelSpec>& all_models() {
  static const std::vector<ModelSpec> models = make_models();
  return models;
}

// ---- Hugging Face config.json ----

using nlohmann::json;

class HfConfig {
 public:
  HfConfig(std::string path, json j) : path_(std::move(path)), j_(std::move(j)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelSpecError(path_ + ": " + what);
  }

  // The first of `keys` that is present and not null.
  const json* find(std::initializer_list<const char*> keys, std::string* found) const {
    for (const char* k : keys) {
      auto it = j_.find(k);
      if (it != j_.end() && !it->is_null()) {
        *found = k;
        return &*it;
      }
    }
    return nullptr;
  }

  static std::string alternatives(std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys)
      s += (s.empty() ? "'" : " or '") + std::string(k) + "'";
    return s;
  }

  std::optional<long> optional_int(std::initializer_list<const char*> keys) const {
    std::string key;
    const json* v = find(keys, &key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || v->get<long>() <= 0)
      fail("key '" + key + "' must be a positive integer, got " + v->dump());
    // Before any narrowing to int: the scenario's checks then apply each key's own bound
    // (models/limits.hpp), none of which is larger.
    if (v->get<long>() > limits::kVocab)
      fail("key '" + key + "' = " + v->dump() + " is out of range; allowed: at most " +
           std::to_string(limits::kVocab));
    return v->get<long>();
  }

  long required_int(std::initializer_list<const char*> keys) const {
    auto v = optional_int(keys);
    if (!v) fail("missing key " + alternatives(keys) + " (a positive integer)");
    return *v;
  }

  // Whether `key` is present and not null.
  bool has(const char* key) const {
    std::string found;
    return find({key}, &found) != nullptr;
  }
  // Whether `key` is an empty list (or absent).
  bool empty_list(const char* key) const {
    std::string found;
    const json* v = find({key}, &found);
    return v == nullptr || (v->is_array() && v->empty());
  }

  std::optional<std::string> optional_string(const char* key) const {
    std::string found;
    const json* v = find({key}, &found);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) fail("key '" + found + "' must be a string, got " + v->dump());
    return v->get<std::string>();
  }

  std::optional<bool> optional_bool(const char* key) const {
    std::string found;
    const json* v = find({key}, &found);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) fail("key '" + found + "' must be true or false, got " + v->dump());
    return v->get<bool>();
  }

 private:
  std::string path_;
  json j_;
};

json parse_file(const std::string& path) {
  json j;
  try {
    j = engine::read_json_file(path, "Hugging Face config file");
  } catch (const engine::ProfileError& e) {
    throw ModelSpecError(e.what());
  }
  if (!j.is_object()) throw ModelSpecError(path + ": not a JSON object");
  return j;
}

// Families with rotary positions, RMSNorm, no linear biases and an untied LM head by default.
bool llama_family(const std::string& model_type) {
  static constexpr std::array<std::string_view, 8> kTypes = {
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "deepseek_v2", "deepseek_v3"};
  return std::find(kTypes.begin(), kTypes.end(), model_type) != kTypes.end();
}

Activation parse_activation(const HfConfig& cfg, bool gated_default) {
  for (const char* key : {"hidden_act", "activation_function"}) {
    auto act = cfg.optional_string(key);
    if (!act) continue;
    if (*act == "silu" || *act == "swish") return Activation::swiglu;
    static constexpr std::array<std::string_view, 6> kGelu = {
        "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "quick_gelu", "relu"};
    if (std::find(kGelu.begin(), kGelu.end(), *act) != kGelu.end()) return Activation::gelu;
    cfg.fail("key '" + std::string(key) + "' is \"" + *act +
             "\"; allowed: silu, swish (SwiGLU MLP) or gelu, gelu_new, gelu_fast, "
             "gelu_pytorch_tanh, quick_gelu, relu (two-matrix MLP)");
  }
  return gated_default ? Activation::swiglu : Activation::gelu;
}

}  // namespace

const ModelSpec* find_model(std::string_view name) {
  for (const auto& m : all_models())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : all_models())
    names.push_back(m.name);
  return names;
}

ModelSpec read_hf_config(const std::string& path) {
  const HfConfig cfg(path, parse_file(path));
  const std::string model_type = cfg.optional_string("model_type").value_or("");
  const bool llama = llama_family(model_type);

  TransformerSpec t;
  t.num_layers = static_cast<int>(cfg.required_int({"num_hidden_layers", "n_layer"}));
  t.hidden_size = cfg.required_int({"hidden_size", "n_embd"});
  t.num_heads = static_cast<int>(cfg.required_int({"num_attention_heads", "n_head"}));
  t.num_kv_heads =
      static_cast<int>(cfg.optional_int({"num_key_value_heads"}).value_or(t.num_heads));
  t.vocab_size = cfg.required_int({"vocab_size"});
  // GPT-2 writes n_inner: null for the default 4h.
  t.ffn_hidden_size =
      cfg.optional_int({"intermediate_size", "n_inner"}).value_or(4 * t.hidden_size);
  t.activation = parse_activation(cfg, llama);
  const bool rotary_family = llama || (model_type.empty() && t.activation == Activation::swiglu);
  t.norm = rotary_family ? Norm::rmsnorm : Norm::layernorm;
  t.bias = !rotary_family;
  // Qwen2's attention always builds q, k and v with biases (modeling_qwen2.py); its config has no
  // key for it.
  t.qkv_bias = model_type == "qwen2" || model_type == "qwen2_moe";
  t.learned_positions = !rotary_family;
  t.max_positions = cfg.optional_int({"max_position_embeddings", "n_positions"}).value_or(2048);
  // PretrainedConfig ties by default; the Llama/Mistral/Qwen configs default to untied.
  t.tied_embeddings = cfg.optional_bool("tie_word_embeddings").value_or(!rotary_family);
  // Encoders attend both ways (BERT and its kin); everything else here is a causal decoder.
  t.causal = !(model_type == "bert" || model_type == "roberta" || model_type == "xlm-roberta");

  // Multi-head latent attention (DeepSeek-V2/V3): every head has its own key and value, rebuilt
  // from the latents; the head widths are the config's, not hidden / heads.
  if (cfg.has("kv_lora_rank")) {
    MlaSpec mla;
    mla.kv_lora_rank = cfg.required_int({"kv_lora_rank"});
    mla.q_lora_rank = cfg.optional_int({"q_lora_rank"}).value_or(0);  // null: a full q_proj
    mla.qk_nope_head_dim = cfg.required_int({"qk_nope_head_dim"});
    mla.qk_rope_head_dim = cfg.required_int({"qk_rope_head_dim"});
    mla.v_head_dim = cfg.required_int({"v_head_dim"});
    t.mla = mla;
    t.num_kv_heads = t.num_heads;
  }
  if (!t.mla && t.hidden_size % t.num_heads != 0)
    cfg.fail("key 'hidden_size' (" + std::to_string(t.hidden_size) +
             ") must be a multiple of 'num_attention_heads' (" + std::to_string(t.num_heads) + ")");
  if (t.num_kv_heads > t.num_heads || t.num_heads % t.num_kv_heads != 0)
    cfg.fail("key 'num_key_value_heads' (" + std::to_string(t.num_kv_heads) +
             ") must divide the number of attention heads (" + std::to_string(t.num_heads) + ")");

  // Architectures the transformer map cannot describe are refused, never read as something else
  // (a DeepSeek-V3 config read as a dense model of 18432-wide MLPs would be 4x off, silently).
  for (const char* key : {"q_lora_rank", "qk_rope_head_dim"})
    if (cfg.has(key) && !t.mla)
      cfg.fail("key '" + std::string(key) +
               "' without 'kv_lora_rank': latent attention needs its key/value latent; allowed: "
               "a DeepSeek-V2/V3 config with kv_lora_rank, or no latent keys (docs/scenario.md)");
  if (cfg.has("n_routed_experts") && cfg.has("num_local_experts"))
    cfg.fail("keys 'n_routed_experts' and 'num_local_experts' both given; allowed: one of them");
  if (cfg.has("mlp_only_layers") && !cfg.empty_list("mlp_only_layers"))
    cfg.fail(
        "key 'mlp_only_layers': dense layers at listed positions are not modelled; "
        "allowed: an empty list (first dense layers and every n-th MoE layer are)");

  if (auto experts = cfg.optional_int({"num_local_experts", "num_experts", "n_routed_experts"})) {
    MoeSpec moe;
    moe.num_experts = static_cast<int>(*experts);
    moe.top_k = static_cast<int>(cfg.required_int({"num_experts_per_tok"}));
    if (moe.top_k > moe.num_experts)
      cfg.fail("key 'num_experts_per_tok' (" + std::to_string(moe.top_k) +
               ") exceeds the number of experts (" + std::to_string(moe.num_experts) + ")");
    moe.expert_ffn_hidden_size =
        cfg.optional_int({"moe_intermediate_size"}).value_or(t.ffn_hidden_size);
    // Qwen2-MoE: one shared expert of shared_expert_intermediate_size, as that many routed-size
    // experts (the same weights and FLOPs); and an MoE block every decoder_sparse_step blocks.
    if (auto shared = cfg.optional_int({"shared_expert_intermediate_size"})) {
      if (*shared % moe.expert_ffn_hidden_size != 0)
        cfg.fail("key 'shared_expert_intermediate_size' (" + std::to_string(*shared) +
                 ") is not a multiple of 'moe_intermediate_size' (" +
                 std::to_string(moe.expert_ffn_hidden_size) +
                 "); allowed: a multiple (shared experts are modelled in routed-expert units)");
      moe.shared_experts = static_cast<int>(*shared / moe.expert_ffn_hidden_size);
    }
    if (auto step = cfg.optional_int({"decoder_sparse_step", "moe_layer_freq"}))
      moe.every = static_cast<int>(*step);
    // DeepSeek: n_shared_experts experts of moe_intermediate_size beside the routed ones, and the
    // first first_k_dense_replace blocks with a dense MLP of intermediate_size.
    if (auto shared = cfg.optional_int({"n_shared_experts"}))
      moe.shared_experts = static_cast<int>(*shared);
    if (auto dense = cfg.optional_int({"first_k_dense_replace"}))
      moe.first_dense = static_cast<int>(*dense);
    t.moe = moe;
  }

  ModelSpec spec;
  spec.name = cfg.optional_string("_name_or_path").value_or("");
  if (spec.name.empty()) {
    const std::filesystem::path p(path);
    const auto dir = p.parent_path().filename().string();
    spec.name = p.stem() == "config" && !dir.empty() ? dir : p.stem().string();
  }
  spec.body = t;
  spec.default_seq_len = 0;  // the scenario's training.seq_len decides
  return spec;
}

}  // namespace clustersim::models
