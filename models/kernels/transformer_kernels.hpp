// The kernels one rank launches for a transformer layer's forward and backward, the way
// Megatron-LM (with PyTorch eager elsewhere) launches them, and ResNet-50's convolutions as
// implicit GEMMs (docs/fidelity.md "Kernel lists").
//
// Conventions. T = micro_batch · seq tokens; t = tensor-parallel size. A linear layer
// Y[T×n] = X[T×k] · Wᵀ (W is [n×k], PyTorch's out × in) is the GEMM m = T, n, k, trans_b;
// its backward launches dgrad dX = dY · W (m = T, n = k, k = n) and wgrad dW = dYᵀ · X
// (m = n, n = k, k = T, trans_a), as Megatron's LinearWithGradAccumulationAndAsyncCommunication.
// Column-parallel layers (QKV, fc1) split n by t, row-parallel ones (out-proj, fc2) split k.
// Norms, dropout and residual adds see T/t tokens with sequence parallelism, T without.
// Bytes count every read and write of a kernel; 16-bit tensors use the config's dtype size.
// Communication (TP all-reduce, SP all-gather / reduce-scatter, EP all-to-all) is not a kernel
// here: the plans schedule it as its own ops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_families.hpp"
#include "models/model_spec.hpp"

namespace clustersim::models::kernels {

// flash: a FlashAttention-2-class kernel; flash1: FlashAttention 1.x through its varlen
// interface (Megatron-LM's legacy FlashSelfAttention): the same kernels' work at FA1's
// efficiency, with q, k, v and the output transposed between [s, b] and [b, s] layouts.
enum class AttentionImpl : std::uint8_t { standard, flash, flash1 };
enum class Pass : std::uint8_t { forward, backward };

struct TransformerKernelConfig {
  long micro_batch = 1;
  long seq = 2048;
  // Keys each query attends over: the whole sequence under context parallelism, where `seq` is
  // this rank's share of it (ring attention visits every KV block); 0: = seq.
  long kv_seq = 0;
  long hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // 0: = heads
  long ffn = 0;
  long vocab = 0;
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  bool bias = true;
  bool learned_positions = true;  // false: rotary embeddings on q and k
  int tp = 1;
  bool sequence_parallel = false;
  AttentionImpl attention = AttentionImpl::flash;
  bool causal = true;         // the fused kernel skips the masked half (standard does not)
  bool fused_kernels = true;  // Megatron's fused softmax, bias-GeLU, bias-dropout-add, RoPE, CE
  // With fused_kernels: the families (family_bit) that run eager all the same.
  std::uint8_t eager_families = 0;
  // false: each weight-gradient GEMM writes a fresh gradient in the activations' dtype and a
  // separate kernel adds it into the main gradient of `main_grad_bytes` per element
  // (Megatron's --no-gradient-accumulation-fusion).
  bool gradient_accumulation_fusion = true;
  double main_grad_bytes = 4;
  // Without that fusion: the add reads a copy of the gradient already cast to the main
  // gradient's dtype, written by a cast kernel of its own. DeepSpeed's BF16_Optimizer
  // (deepspeed/runtime/bf16_optimizer.py update_hp_grads at 56c522386, 2022-04-19) runs
  // `hp_grad.data.add_(lp.grad.data.to(hp_grad.dtype))` after each micro-batch's backward:
  // 2 + 4 B for .to(), 4 + 4 + 4 B for add_, 18 B per parameter against a fused add's 10 B.
  bool cast_main_grad = false;
  // > 1: the LM head's projection and cross-entropy run chunk by chunk of T/loss_chunks tokens,
  // each chunk's loss one compiled kernel that keeps the 16-bit logits (training.loss_chunks).
  int loss_chunks = 1;
  bool dropout = true;  // hidden and attention dropout (GPT/BERT yes, Llama no)
  Precision dtype = Precision::bf16;
  // PyTorch autocast over fp32 parameters (training.amp): the residual stream stays fp32 (fp32
  // embeddings plus 16-bit sublayer outputs), softmax and layer norm compute in fp32.
  bool autocast = false;
  // MoE MLP (num_experts > 0): `local_experts` experts on this rank, each receiving
  // `tokens_per_expert` tokens (<= 0: T · top_k / num_experts, an even router).
  int num_experts = 0;
  int local_experts = 0;  // 0: all
  int top_k = 0;
  long expert_ffn = 0;
  int shared_experts = 0;
  double tokens_per_expert = 0;
  // Multi-head latent attention (DeepSeek): the latent projections replace the QKV GEMM, and the
  // heads' query/key and value widths differ (qk_head_dim, v_head_dim).
  std::optional<MlaSpec> mla;
};

// From a model preset: shape, activation, norm, bias, positions; the rest keeps its defaults.
// A config's sizes as doubles, the one place both the kernel lists and the saved-tensor lists
// (saved_tensors.hpp) take them from: tokens T = b·s (Tn = T/t with sequence parallelism), the
// per-rank head and KV widths under TP (KV heads replicated when fewer than t), element bytes
// of the activations (bf16 under fp8 training). Throws std::invalid_argument for sizes < 1 or a
// tp that does not divide the heads.
// d is a head's query/key width and dv its value width (equal but under latent attention);
// o_local_width = a_local·dv is the attention output this rank projects; kv_local_width is the
// mean of a rank's key and value widths, so k and v together are 2·kv_local_width.
struct LayerDims {
  double T, Tn, h, d, dv, a_local, kv_local_width, q_local_width, o_local_width, f, e, t, s, b;
};
LayerDims layer_dims(const TransformerKernelConfig& config);

// FlashAttention-class attention reached from eager PyTorch model code (fused_kernels false:
// HF Transformers, torchtune, LitGPT call torch's scaled_dot_product_attention): with fewer KV
// heads than query heads, k and v are first expanded to every query head (expand + reshape, a
// copy) and the kernel reads, and its backward keeps, the expanded copies; its output,
// [b, heads, s, d], is transposed into a contiguous copy for the projection, so the kernel's
// output and the projection's input are two tensors. Fused stacks (Megatron / Transformer
// Engine) pass the KV heads and the [s, b, h] layout straight through.
bool attention_from_eager_code(const TransformerKernelConfig& config);
// Whether the attention core is a flash-class kernel (flash or flash1).
bool flash_attention(const TransformerKernelConfig& config);
// Whether the family runs as its fused kernel: fused_kernels and not stated eager.
bool fused(const TransformerKernelConfig& config, KernelFamily family);
// Whether the attention kernel's output and the projection's input are two tensors (eager
// code's contiguous copy, or FlashAttention 1's batch-major output copied back to [s, b, h]).
bool attention_output_copied(const TransformerKernelConfig& config);
// The width of k (and of v) a flash-class attention kernel reads and keeps: the KV heads', or
// every local query head's when eager code expands them.
double attention_kv_width(const TransformerKernelConfig& config, const LayerDims& x);

TransformerKernelConfig kernel_config(const TransformerSpec& model, long micro_batch, long seq,
                                      int tp = 1);

// Kernel lists of one layer op. `names` interns the kernels' names ("qkv.fprop", ...).
std::vector<engine::Kernel> attention_block_kernels(const TransformerKernelConfig& c, Pass pass,
                                                    engine::KernelTable& names);
// The MLP block; an MoE block (router, permute, grouped expert GEMMs, unpermute) when
// num_experts > 0.
std::vector<engine::Kernel> mlp_block_kernels(const TransformerKernelConfig& c, Pass pass,
                                              engine::KernelTable& names);
// An MoE block split as the expert-parallel plan runs it (expert_parallelism.hpp): `router`
// (norm, router GEMM, softmax, top-k, permute), `experts` (the local experts' grouped GEMMs and
// activation, unpermute), `shared` (the shared experts, a dense MLP; empty without any). The
// residual bias-dropout-add goes with the forward's last part and the backward's first; the
// norm's backward and the residual gradient add with the router's backward. In plan order
// (forward router, experts, shared; backward shared, experts, router) the parts concatenate to
// mlp_block_kernels.
enum class MoePart : std::uint8_t { router, experts, shared };
std::vector<engine::Kernel> moe_kernels(const TransformerKernelConfig& c, Pass pass, MoePart part,
                                        engine::KernelTable& names);
// The attention core alone (flash kernel, or QKᵀ, softmax, dropout, ·V): what selective
// recompute re-runs.
std::vector<engine::Kernel> attention_core_kernels(const TransformerKernelConfig& c, Pass pass,
                                                   engine::KernelTable& names);
// Attention then MLP: one transformer layer.
std::vector<engine::Kernel> transformer_layer_kernels(const TransformerKernelConfig& c, Pass pass,
                                                      engine::KernelTable& names);
// Word (and learned position) embedding lookup of the vocabulary shard, dropout.
std::vector<engine::Kernel> embedding_kernels(const TransformerKernelConfig& c, Pass pass,
                                              engine::KernelTable& names);
// Final norm, logits GEMM over the vocabulary shard, fp32 vocab-parallel cross-entropy.
std::vector<engine::Kernel> lm_head_kernels(const TransformerKernelConfig& c, Pass pass,
                                            engine::KernelTable& names);

enum class OptimizerKind : std::uint8_t { adam, sgd };
struct OptimizerKernelConfig {
  double params = 0;          // parameters this rank updates
  std::uint64_t tensors = 1;  // parameter tensors (multi-tensor kernels batch them)
  OptimizerKind optimizer = OptimizerKind::adam;
  bool fused = true;             // apex/Megatron FusedAdam (one pass) vs torch foreach (per op)
  bool master_weights = true;    // mixed precision: fp32 master copy, 16-bit model weights
  bool clip_grad = true;         // global grad norm + scale
  bool momentum = true;          // SGD keeps (reads and writes) a momentum buffer
  bool l2_decay = false;         // SGD's / Adam's weight decay added to the gradients
  bool decoupled_decay = false;  // AdamW's weight decay, a multiply of the parameters
  bool zero_grad = true;         // memset of the fp32 gradient buffer
};
// Zero-grad, grad-norm/clip, the optimizer step and the master → 16-bit weight cast.
std::vector<engine::Kernel> optimizer_kernels(const OptimizerKernelConfig& c,
                                              engine::KernelTable& names);

// Sum of the kernels' FLOPs (GEMM and attention; memory kernels count what they carry).
double total_flops(const std::vector<engine::Kernel>& kernels);
double gemm_flops(const std::vector<engine::Kernel>& kernels);  // GEMMs and attention only

}  // namespace clustersim::models::kernels
