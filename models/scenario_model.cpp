// The `model` section: a preset name, a transformer map (optionally on top of a preset or a
// Hugging Face config.json), or a generic layer list.
#include "models/scenario_detail.hpp"

namespace clustersim::models::detail {
namespace {

const ModelSpec& model_preset(const yaml::Value& v) {
  const std::string name = v.text();
  const ModelSpec* model = find_model(name);
  if (model == nullptr) v.fail_choice(name, model_names(), "model preset");
  return *model;
}

std::vector<LayerSpec> read_layers(const yaml::Value& v) {
  std::vector<LayerSpec> layers;
  for (const yaml::Value& item : v.sequence()) {
    yaml::MapReader m = item.map();
    LayerSpec layer;
    layer.name = "layer" + std::to_string(layers.size());
    if (auto x = m.get("name")) layer.name = x->text();
    layer.params = m.require("params", "the parameter count, e.g. 1e8").number(0.0);
    layer.forward_flops =
        m.require("forward_flops", "forward FLOPs per sample, e.g. 2e11").number(0.0);
    if (auto x = m.get("backward_flops")) layer.backward_flops = x->number(0.0);
    if (auto x = m.get("activation_bytes")) layer.activation_bytes = x->size();
    if (auto x = m.get("memory_bytes")) layer.memory_bytes = x->size();
    if (auto x = m.get("repeat")) layer.repeat = x->count(1, limits::kLayers);
    m.finish();
    layers.push_back(std::move(layer));
  }
  if (layers.empty()) v.fail("a layer list needs at least one layer");
  return layers;
}

MoeSpec read_moe(const yaml::Value& v, const std::optional<MoeSpec>& base, long ffn_hidden) {
  yaml::MapReader m = v.map();
  MoeSpec moe = base.value_or(MoeSpec{});
  const bool complete = base.has_value();
  auto experts = complete ? m.get("num_experts") : m.require("num_experts", "an integer >= 1");
  if (experts) moe.num_experts = experts->count(1, limits::kExperts);
  auto top_k = complete ? m.get("top_k") : m.require("top_k", "an integer >= 1");
  if (top_k) moe.top_k = top_k->count(1, limits::kExperts);
  if (auto x = m.get("every")) moe.every = x->count(1, limits::kLayers);
  if (auto x = m.get("expert_ffn_hidden_size"))
    moe.expert_ffn_hidden_size = x->integer(1, limits::kHidden);
  if (moe.expert_ffn_hidden_size == 0) moe.expert_ffn_hidden_size = ffn_hidden;
  if (auto x = m.get("shared_experts")) moe.shared_experts = x->count(0, limits::kExperts);
  if (auto x = m.get("capacity_factor")) moe.capacity_factor = x->number(1e-6);
  if (auto x = m.get("imbalance")) moe.imbalance = x->number(1.0);
  if (auto x = m.get("first_dense")) moe.first_dense = x->count(0, limits::kLayers);
  m.finish();
  if (moe.top_k > moe.num_experts)
    (top_k ? *top_k : v)
        .fail("top_k = " + std::to_string(moe.top_k) + " exceeds num_experts = " +
              std::to_string(moe.num_experts) + "; allowed: 1 <= top_k <= num_experts");
  return moe;
}

// model.mla: all five widths when stated anew, any of them over a preset's or config's; a
// q_lora_rank of 0 projects queries directly.
MlaSpec read_mla(const yaml::Value& v, const std::optional<MlaSpec>& base) {
  yaml::MapReader m = v.map();
  MlaSpec mla = base.value_or(MlaSpec{});
  const bool complete = base.has_value();
  auto width = [&](const char* key, long& field, long min) {
    auto x = complete ? m.get(key) : std::optional(m.require(key, "an integer >= 1"));
    if (x) field = x->integer(min, limits::kHidden);
  };
  if (auto x = m.get("q_lora_rank")) mla.q_lora_rank = x->integer(0, limits::kHidden);
  width("kv_lora_rank", mla.kv_lora_rank, 1);
  width("qk_nope_head_dim", mla.qk_nope_head_dim, 1);
  width("qk_rope_head_dim", mla.qk_rope_head_dim, 1);
  width("v_head_dim", mla.v_head_dim, 1);
  return mla;
}

// Transformer keys over `base` (a preset's or a config.json's shape, or nothing).
TransformerSpec read_transformer(yaml::MapReader& m, const yaml::Value& v,
                                 const std::optional<TransformerSpec>& base) {
  TransformerSpec t = base.value_or(TransformerSpec{});
  const bool complete = base.has_value();
  auto integer = [&](std::string_view key, long& field, const char* what, long max) {
    auto x = complete ? m.get(key) : std::optional(m.require(key, what));
    if (x) field = x->integer(1, max);
    return x;
  };
  long layers = t.num_layers, heads = t.num_heads, kv_heads = t.num_kv_heads;
  const bool was_mha = t.num_kv_heads == t.num_heads;
  integer("num_layers", layers, "the number of transformer blocks", limits::kLayers);
  integer("hidden_size", t.hidden_size, "the model width", limits::kHidden);
  auto heads_v = integer("num_heads", heads, "the number of attention heads", limits::kHidden);
  auto kv_v = m.get("num_kv_heads");
  if (kv_v)
    kv_heads = kv_v->integer(1, limits::kHidden);
  else if (!complete || was_mha)
    kv_heads = heads;  // multi-head attention unless stated
  auto ffn = m.get("ffn_hidden_size");
  if (ffn)
    t.ffn_hidden_size = ffn->integer(1, limits::kHidden);
  else if (!complete)
    t.ffn_hidden_size = 4 * t.hidden_size;  // GPT's 4h
  integer("vocab_size", t.vocab_size, "the vocabulary size", limits::kVocab);
  if (auto x = m.get("activation"))
    t.activation =
        x->choice<Activation>({{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu}});
  if (auto x = m.get("norm"))
    t.norm = x->choice<Norm>({{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}});
  if (auto x = m.get("bias")) t.bias = x->boolean();
  if (auto x = m.get("qkv_bias")) t.qkv_bias = x->boolean();
  if (auto x = m.get("learned_positions")) t.learned_positions = x->boolean();
  if (auto x = m.get("max_positions")) t.max_positions = x->integer(1, limits::kPositions);
  if (auto x = m.get("tied_embeddings")) t.tied_embeddings = x->boolean();
  if (auto x = m.get("moe")) t.moe = read_moe(*x, t.moe, t.ffn_hidden_size);
  auto mla_v = m.get("mla");
  if (mla_v) t.mla = read_mla(*mla_v, t.mla);
  t.num_layers = static_cast<int>(layers);
  t.num_heads = static_cast<int>(heads);
  t.num_kv_heads = static_cast<int>(kv_heads);
  if (t.mla) {  // every head has its own key and value, rebuilt from the latent
    if (kv_v && kv_heads != heads)
      kv_v->fail("num_kv_heads " + std::to_string(kv_heads) +
                 " with latent attention (model.mla); allowed: num_heads (" +
                 std::to_string(heads) + ") or no key");
    t.num_kv_heads = t.num_heads;
    return t;  // head widths are mla's, not hidden_size / num_heads
  }
  const yaml::Value& heads_at = heads_v ? *heads_v : v;
  if (t.hidden_size % t.num_heads != 0)
    heads_at.fail("hidden_size " + std::to_string(t.hidden_size) +
                  " is not divisible by num_heads " + std::to_string(t.num_heads) +
                  "; allowed: num_heads dividing hidden_size");
  if (t.num_heads % t.num_kv_heads != 0)
    (kv_v ? *kv_v : v)
        .fail("num_kv_heads " + std::to_string(t.num_kv_heads) + " does not divide num_heads " +
              std::to_string(t.num_heads) + "; allowed: divisors of num_heads");
  return t;
}

}  // namespace

ModelSpec read_model(const yaml::Value& value, const std::filesystem::path& base_dir) {
  if (!value.is_map()) return model_preset(value);
  yaml::MapReader m = value.map();
  std::optional<ModelSpec> base;
  auto preset = m.get("preset");
  auto hf = m.get("hf_config");
  if (preset && hf) hf->fail("give preset or hf_config, not both");
  if (preset) base = model_preset(*preset);
  if (hf) {
    const std::string path = existing_file(*hf, base_dir);
    try {
      base = read_hf_config(path);
      base->config_file = path;
    } catch (const ModelSpecError& e) {
      hf->fail(e.what());
    }
  }
  ModelSpec model = base.value_or(ModelSpec{});
  if (auto x = m.get("name")) model.name = x->text();
  if (auto layers = m.get("layers")) {
    if (base) layers->fail("a layer list cannot be combined with preset or hf_config");
    model.body = read_layers(*layers);
    m.finish();  // only name and layers beside it
    if (model.name.empty()) model.name = "custom";
    return model;
  }
  std::optional<TransformerSpec> shape;
  if (base) {
    if (!std::holds_alternative<TransformerSpec>(base->body)) {
      m.finish();  // a layer-list preset takes no transformer keys
      return model;
    }
    shape = std::get<TransformerSpec>(base->body);
  }
  model.body = read_transformer(m, value, shape);
  m.finish();
  if (model.name.empty()) model.name = "custom";
  return model;
}

}  // namespace clustersim::models::detail
