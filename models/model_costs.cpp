// Expands a model into layers with their parameters, FLOPs and stored activations (per sample).
// Formulas and the reasoning behind each term: docs/presets.md "Costing".
#include "models/model_costs.hpp"

#include <stdexcept>

namespace clustersim::models {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("model: " + what);
}

void validate(const TransformerSpec& t, int seq_len) {
  require(seq_len > 0,
          "seq_len must be a positive integer for a transformer, got " + std::to_string(seq_len));
  require(t.num_layers > 0, "num_layers must be positive");
  require(t.hidden_size > 0, "hidden_size must be positive");
  require(t.num_heads > 0 && (t.mla || t.hidden_size % t.num_heads == 0),
          "num_heads must be positive and divide hidden_size");
  if (t.mla)
    require(t.mla->kv_lora_rank > 0 && t.mla->qk_nope_head_dim > 0 && t.mla->qk_rope_head_dim > 0 &&
                t.mla->v_head_dim > 0 && t.mla->q_lora_rank >= 0,
            "mla widths must be positive (q_lora_rank may be 0)");
  require(t.num_kv_heads > 0 && t.num_heads % t.num_kv_heads == 0,
          "num_kv_heads must be positive and divide num_heads");
  require(t.ffn_hidden_size > 0, "ffn_hidden_size must be positive");
  require(t.vocab_size > 0, "vocab_size must be positive");
  require(!t.learned_positions || t.max_positions > 0,
          "max_positions must be positive with learned positions");
  if (t.moe) {
    const MoeSpec& m = *t.moe;
    require(m.num_experts > 0, "moe.num_experts must be positive");
    require(m.top_k > 0 && m.top_k <= m.num_experts, "moe.top_k must be in 1..num_experts");
    require(m.every > 0, "moe.every must be positive");
    require(m.expert_ffn_hidden_size > 0, "moe.expert_ffn_hidden_size must be positive");
    require(m.shared_experts >= 0, "moe.shared_experts must not be negative");
  }
}

class TransformerCoster {
 public:
  TransformerCoster(const TransformerSpec& t, int seq_len)
      : t_(t),
        s_(seq_len),
        h_(static_cast<double>(t.hidden_size)),
        a_(t.num_heads),
        kv_width_(static_cast<double>(t.num_kv_heads) * h_ / t.num_heads),
        v_(static_cast<double>(t.vocab_size)) {}

  std::vector<LayerCost> expand() {
    std::vector<LayerCost> out;
    out.push_back(embedding());
    for (int k = 0; k < t_.num_layers; ++k) {
      out.push_back(attention(k));
      const bool moe = t_.moe && t_.moe->is_moe_block(k);  // Megatron's moe_layer_freq pattern
      out.push_back(moe ? moe_mlp(k) : dense_mlp(k));
    }
    out.push_back(lm_head());
    for (auto& l : out) {
      for (const auto& p : l.tensors)
        l.params += p.count;
      l.backward_flops = 2 * l.forward_flops;
    }
    return out;
  }

 private:
  static std::string block(int k) { return "L" + std::to_string(k); }

  void norm(LayerCost& l, const std::string& prefix) const {
    l.tensors.push_back({prefix + ".norm.weight", h_, TensorRole::norm, -1, true});
    if (t_.norm == Norm::layernorm)
      l.tensors.push_back({prefix + ".norm.bias", h_, TensorRole::norm, -1, true});
  }

  // `role`/`expert` mark an expert's or the router's tensors.
  void linear(LayerCost& l, const std::string& name, double in, double out_features,
              TensorRole role = TensorRole::weight, int expert = -1,
              bool tp_replicated = false) const {
    l.tensors.push_back({name + ".weight", in * out_features, role, expert, tp_replicated});
    if (t_.bias)
      l.tensors.push_back({name + ".bias", out_features,
                           role == TensorRole::weight ? TensorRole::bias : role, expert,
                           tp_replicated});
  }

  LayerCost embedding() const {
    LayerCost l{"embedding", LayerRole::embedding, -1, {}, 0, 0, 0, 0};
    l.tensors.push_back({"embedding.word.weight", v_ * h_, TensorRole::embedding});
    if (t_.learned_positions)
      l.tensors.push_back({"embedding.position.weight", static_cast<double>(t_.max_positions) * h_,
                           TensorRole::embedding});
    l.activation_bytes = s_ * h_;  // the embedding dropout mask, 1 byte per element
    return l;
  }

  LayerCost attention(int k) const {
    const std::string p = block(k) + ".attn";
    LayerCost l{p, LayerRole::attention, k, {}, 0, 0, 0, 0};
    norm(l, p);
    if (t_.mla) return latent_attention(std::move(l), p, *t_.mla);
    linear(l, p + ".qkv", h_, h_ + 2 * kv_width_);
    if (t_.qkv_bias && !t_.bias)
      l.tensors.push_back({p + ".qkv.bias", h_ + 2 * kv_width_, TensorRole::bias});
    linear(l, p + ".proj", h_, h_);
    // QKV and output projections, then Q·Kᵀ and scores·V (2·s²·h each).
    l.forward_flops = 2 * s_ * h_ * (h_ + 2 * kv_width_) + 2 * s_ * h_ * h_ + 4 * s_ * s_ * h_;
    // Korthikanti et al.: QKV input 2sh, Q 2sh, K 2s·kv, V 2s·kv, softmax out 2as², its dropout
    // mask as², dropout out 2as², projection input 2sh, dropout mask sh; plus the norm input 2sh.
    // With kv = h (no GQA) this is 11sh + 5as² + 2sh.
    l.activation_bytes = 7 * s_ * h_ + 4 * s_ * kv_width_ + 5 * a_ * s_ * s_ + 2 * s_ * h_;
    return l;
  }

  // DeepSeek's multi-head latent attention (modeling_deepseek.py's DeepseekV3Attention): q by a
  // latent (q_a_proj, its RMSNorm, q_b_proj) or directly (q_proj); k's rope part and the kv latent
  // by kv_a_proj_with_mqa, the latent's RMSNorm, the per-head k (nope) and v by kv_b_proj; o_proj.
  LayerCost latent_attention(LayerCost l, const std::string& p, const MlaSpec& m) const {
    const double heads = a_, dqk = static_cast<double>(m.qk_head_dim());
    const double dv = static_cast<double>(m.v_head_dim);
    const double q_rank = static_cast<double>(m.q_lora_rank);
    const double kv_rank = static_cast<double>(m.kv_lora_rank);
    const double rope = static_cast<double>(m.qk_rope_head_dim);
    const double nope = static_cast<double>(m.qk_nope_head_dim);
    double macs = 0;  // per token, the projections'
    // The down-projections are duplicated on every tensor-parallel rank (Megatron-Core's
    // MLASelfAttention builds them with parallel_mode "duplicated"); the rest are split.
    auto project = [&](const std::string& name, double in, double out, bool replicated = false) {
      linear(l, name, in, out, TensorRole::weight, -1, replicated);
      macs += in * out;
    };
    if (m.q_lora_rank > 0) {
      project(p + ".q_down", h_, q_rank, true);
      l.tensors.push_back({p + ".q_norm.weight", q_rank, TensorRole::norm, -1, true});
      project(p + ".q_up", q_rank, heads * dqk);
    } else {
      project(p + ".q", h_, heads * dqk);
    }
    project(p + ".kv_down", h_, kv_rank + rope, true);
    l.tensors.push_back({p + ".kv_norm.weight", kv_rank, TensorRole::norm, -1, true});
    project(p + ".kv_up", kv_rank, heads * (nope + dv));
    project(p + ".proj", heads * dv, h_);
    // The projections, then Q·Kᵀ (2·s²·heads·dqk) and scores·V (2·s²·heads·dv).
    l.forward_flops = 2 * s_ * macs + 2 * s_ * s_ * heads * (dqk + dv);
    // As the multi-head count: the norm and projection inputs, the latents and their norms'
    // inputs, q, k, v, the softmax's 5·heads·s², the output projection's input, its dropout mask.
    l.activation_bytes = 4 * s_ * h_ + 4 * s_ * (q_rank + kv_rank + rope) +
                         2 * s_ * heads * (2 * dqk + 2 * dv) + 5 * heads * s_ * s_ + s_ * h_;
    return l;
  }

  double matrices_per_mlp() const { return t_.activation == Activation::swiglu ? 3 : 2; }

  // Stored bytes of the ffn-wide intermediates: GeLU keeps its input and output (2 × 2·s·f, which
  // is Korthikanti's 8sh + 8sh at f = 4h); SwiGLU keeps gate, up and their product (3 × 2·s·f).
  double intermediate_bytes(double ffn) const {
    return (t_.activation == Activation::swiglu ? 6 : 4) * s_ * ffn;
  }

  void mlp_tensors(LayerCost& l, const std::string& p, double ffn,
                   TensorRole role = TensorRole::weight, int expert = -1) const {
    if (t_.activation == Activation::swiglu) {
      linear(l, p + ".gate", h_, ffn, role, expert);
      linear(l, p + ".up", h_, ffn, role, expert);
      linear(l, p + ".down", ffn, h_, role, expert);
    } else {
      linear(l, p + ".fc1", h_, ffn, role, expert);
      linear(l, p + ".fc2", ffn, h_, role, expert);
    }
  }

  LayerCost dense_mlp(int k) const {
    const std::string p = block(k) + ".mlp";
    const double ffn = static_cast<double>(t_.ffn_hidden_size);
    LayerCost l{p, LayerRole::mlp, k, {}, 0, 0, 0, 0};
    norm(l, p);
    mlp_tensors(l, p, ffn);
    l.forward_flops = 2 * s_ * h_ * ffn * matrices_per_mlp();
    // fc1 input 2sh + intermediates + dropout mask sh, plus the norm input 2sh.
    l.activation_bytes = 3 * s_ * h_ + intermediate_bytes(ffn) + 2 * s_ * h_;
    return l;
  }

  // Router, then each token through top_k routed experts and every shared expert.
  LayerCost moe_mlp(int k) const {
    const MoeSpec& m = *t_.moe;
    const std::string p = block(k) + ".mlp";
    const double ffn = static_cast<double>(m.expert_ffn_hidden_size);
    const double experts = m.num_experts;
    const double per_token = m.top_k + m.shared_experts;
    LayerCost l{p, LayerRole::moe, k, {}, 0, 0, 0, 0};
    norm(l, p);
    l.tensors.push_back({p + ".router.weight", h_ * experts, TensorRole::router, -1, true});
    for (int e = 0; e < m.num_experts; ++e)
      mlp_tensors(l, p + ".experts." + std::to_string(e), ffn, TensorRole::expert, e);
    for (int e = 0; e < m.shared_experts; ++e)
      mlp_tensors(l, p + ".shared." + std::to_string(e), ffn, TensorRole::shared);
    l.forward_flops = 2 * s_ * h_ * experts + per_token * 2 * s_ * h_ * ffn * matrices_per_mlp();
    // Norm input 2sh, router probabilities 2·s·E, per expert copy of a token its input 2sh and
    // intermediates, the dropout mask sh.
    l.activation_bytes = 2 * s_ * h_ + 2 * s_ * experts +
                         per_token * (2 * s_ * h_ + intermediate_bytes(ffn)) + s_ * h_;
    return l;
  }

  LayerCost lm_head() const {
    LayerCost l{"lm_head", LayerRole::head, -1, {}, 0, 0, 0, 0};
    norm(l, "lm_head");
    if (!t_.tied_embeddings) l.tensors.push_back({"lm_head.weight", v_ * h_, TensorRole::weight});
    l.forward_flops = 2 * s_ * h_ * v_;  // computed whether or not the matrix is shared
    // Final norm input 2sh, logit projection input 2sh, fp32 logits for the loss 4sV.
    l.activation_bytes = 4 * s_ * h_ + 4 * s_ * v_;
    return l;
  }

  const TransformerSpec& t_;
  double s_, h_, a_, kv_width_, v_;
};

std::vector<LayerCost> expand_layers(const std::vector<LayerSpec>& specs) {
  std::vector<LayerCost> out;
  for (const auto& spec : specs) {
    require(!spec.name.empty(), "a layer needs a name");
    require(spec.repeat >= 1, "layer '" + spec.name + "': repeat must be at least 1");
    require(spec.params >= 0 && spec.forward_flops >= 0 && spec.activation_bytes >= 0,
            "layer '" + spec.name + "': params, forward_flops and activation_bytes must be >= 0");
    for (int r = 0; r < spec.repeat; ++r) {
      const std::string name =
          spec.repeat == 1 ? spec.name : spec.name + "[" + std::to_string(r) + "]";
      LayerCost l{name,        LayerRole::generic, -1, {},
                  spec.params, spec.forward_flops, 0,  spec.activation_bytes};
      l.memory_bytes = spec.memory_bytes < 0 ? spec.activation_bytes : spec.memory_bytes;
      if (spec.params > 0) l.tensors.push_back({name + ".weight", spec.params});
      l.backward_flops = spec.backward_flops < 0 ? 2 * spec.forward_flops : spec.backward_flops;
      out.push_back(std::move(l));
    }
  }
  return out;
}

}  // namespace

std::vector<LayerCost> expand_model(const ModelSpec& model, int seq_len) {
  if (const auto* layers = std::get_if<std::vector<LayerSpec>>(&model.body))
    return expand_layers(*layers);
  const auto& t = std::get<TransformerSpec>(model.body);
  validate(t, seq_len);
  auto layers = TransformerCoster(t, seq_len).expand();
  // A transformer's kernels are GEMMs on the activations they keep: the same bytes move.
  for (auto& l : layers)
    l.memory_bytes = l.activation_bytes;
  return layers;
}

double total_params(const std::vector<LayerCost>& layers) {
  double sum = 0;
  for (const auto& l : layers)
    sum += l.params;
  return sum;
}

}  // namespace clustersim::models
