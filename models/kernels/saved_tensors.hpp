// What a transformer layer's forward leaves in memory for its backward, tensor by tensor, next to
// its kernel lists (transformer_kernels.hpp) and from the same configuration: which kernel
// produces or saves each tensor, its bytes on this rank, and the facts the recompute policies
// select on (docs/memory.md "Activations"). Built once per layer shape, like the kernel lists.
//
// Conventions as in transformer_kernels.hpp: T = micro_batch · seq tokens, Tn = T/t with sequence
// parallelism (else T), 16-bit tensors in the config's dtype, dropout masks 1 byte per element,
// softmax statistics and the cross-entropy's softmax in fp32. Per-token statistics smaller than a
// hidden vector (the norms' mean and 1/σ, token indices, top-k weights) are left out, as
// Korthikanti et al. 2022 leave them out; FlashAttention's log-sum-exp is counted.
//
// With standard attention, unfused kernels and GeLU the lists reproduce Korthikanti et al. 2022
// exactly: s·b·h·(34 + 5·a·s/h) bytes per layer, ÷t with sequence parallelism,
// s·b·h·(10 + 24/t + 5·a·s/(h·t)) with tensor parallelism alone, 2·s·b·h (÷t with sequence
// parallelism) with full recompute; tests/models/test_memory_saved.cpp checks it.
#pragma once

#include <string>
#include <vector>

#include "models/kernels/transformer_kernels.hpp"

namespace clustersim::models::kernels {

struct SavedTensor {
  std::string name;  // the kernel that produces (or saves) it, "attn.softmax.out"
  double bytes = 0;  // on this rank, for one micro-batch
  // Held for the backward when nothing is recomputed.
  bool saved = true;
  // Inside the attention core (scores, softmax, its dropout, FlashAttention's log-sum-exp):
  // what Megatron-LM's selective recompute drops and recomputes.
  bool attention_core = false;
  // The output of a GEMM or attention kernel: what an op-level policy (torchtitan's
  // `selective_ac_option: op`, training.recompute: selective_op) keeps.
  bool op_output = false;
};

struct LayerSavedTensors {
  std::vector<SavedTensor> tensors;
  // The layer's input when it opens a checkpointed transformer block (the attention layer): all
  // that full recompute keeps. 0 for layers that do not open a block.
  double block_input = 0;
  // Bytes that live only while the layer's forward or backward runs, on top of what is saved
  // (standard attention's raw scores, the logits' gradients, FlashAttention's fp32 dq
  // accumulator, the MLP's intermediate gradients).
  double transient_forward = 0;
  double transient_backward = 0;
};

enum class RecomputePolicy : std::uint8_t { none, selective, full, selective_op };

// One list per layer kind; the MLP list is an MoE block's when c.num_experts > 0 (tokens per
// expert as the kernels have them, capacity and imbalance included).
LayerSavedTensors embedding_saved(const TransformerKernelConfig& c);
LayerSavedTensors attention_block_saved(const TransformerKernelConfig& c);
LayerSavedTensors mlp_block_saved(const TransformerKernelConfig& c);
LayerSavedTensors lm_head_saved(const TransformerKernelConfig& c);

// Bytes one micro-batch leaves until the layer's backward under `policy`. `recomputable`: the
// layer belongs to a checkpointed transformer block (not the embedding or the LM head).
double kept_bytes(const LayerSavedTensors& layer, RecomputePolicy policy, bool recomputable);
// What the recompute brings back before the layer's backward, on top of what was kept: the
// attention core (selective), the saved tensors that are not kept op outputs (selective_op), all
// saved tensors but the block input (full).
double recomputed_bytes(const LayerSavedTensors& layer, RecomputePolicy policy, bool recomputable);
// Everything the backward needs without recompute: the saved tensors.
double saved_bytes(const LayerSavedTensors& layer);

}  // namespace clustersim::models::kernels
