// What a model is: a transformer described by its shape, or a generic list of layers
// (DESIGN.md "Scenario file"), plus the presets and the Hugging Face config.json reader.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace clustersim::models {

enum class Activation { gelu, swiglu };
enum class Norm { layernorm, rmsnorm };

struct MoeSpec {
  int num_experts = 0;
  int top_k = 0;
  int every = 1;  // every n-th layer is MoE
  long expert_ffn_hidden_size = 0;
  int shared_experts = 0;
  double capacity_factor = 1.0;
  double imbalance = 1.0;  // hottest expert receives this × the mean
  int first_dense = 0;     // the first n blocks keep a dense MLP (DeepSeek's first_k_dense_replace)
  // Hugging Face's rule (DeepSeek, Qwen-MoE): block k is MoE when k >= first_dense and k % every ==
  // 0.
  bool is_moe_block(int k) const { return k >= first_dense && k % every == 0; }
};

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 §2.1; DeepSeek-V3): keys and values
// are rebuilt per head from a shared kv_lora_rank latent, queries from a q_lora_rank latent (or
// projected directly when q_lora_rank is 0, as in DeepSeek-V2-Lite); each head's query and key
// are qk_nope_head_dim + qk_rope_head_dim wide (the rope part of the key shared by all heads),
// its value v_head_dim.
struct MlaSpec {
  long q_lora_rank = 0;
  long kv_lora_rank = 0;
  long qk_nope_head_dim = 0;
  long qk_rope_head_dim = 0;
  long v_head_dim = 0;
  long qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

struct TransformerSpec {
  int num_layers = 0;
  long hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;  // grouped-query attention when < num_heads
  long ffn_hidden_size = 0;
  long vocab_size = 0;
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  bool bias = true;  // linear layers carry biases (GPT-2/3, BERT) or not (Llama)
  // Without `bias`, the QKV projection alone still carries one (Qwen2, Qwen2.5: q, k and v
  // biases, h + 2·kv_width a block).
  bool qkv_bias = false;
  bool learned_positions = true;  // learned position embeddings (GPT, BERT) vs rotary
  long max_positions = 2048;      // rows of the learned position table
  bool tied_embeddings = false;   // LM head shares the embedding matrix
  bool causal = true;             // decoder (causal mask) or encoder (BERT: bidirectional)
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;  // attention by latents instead of q, k, v projections
};

// A layer of the generic list; costs are per sample.
struct LayerSpec {
  std::string name;
  double params = 0.0;
  double forward_flops = 0.0;
  double backward_flops = -1.0;   // < 0: twice the forward
  double activation_bytes = 0.0;  // stored for backward, per sample
  int repeat = 1;
  // Bytes the forward reads and writes per sample besides the weights (the roofline's memory
  // side); < 0: the activation bytes. Convolutional nets with batch norm move several times
  // what they store.
  double memory_bytes = -1.0;
};

struct ModelSpec {
  std::string name;
  std::variant<TransformerSpec, std::vector<LayerSpec>> body;
  int default_seq_len = 0;  // 0: the scenario must say; layer lists ignore seq_len
  std::string config_file;  // the Hugging Face config.json it was read from, if any
};

const ModelSpec* find_model(std::string_view name);
std::vector<std::string> model_names();

// Reads a Hugging Face config.json (GPT-2, Llama, Mistral/Mixtral, BERT, Qwen-style keys).
// Throws ModelSpecError naming the file and the missing or bad key.
class ModelSpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
ModelSpec read_hf_config(const std::string& path);

}  // namespace clustersim::models
