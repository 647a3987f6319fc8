// Kernel families a scenario may state fused or eager one by one (training.fused_kernels as a
// map, docs/scenario.md): Megatron-style model code where only some of Megatron's fusions run.
#pragma once

#include <cstdint>

namespace clustersim::models::kernels {

enum class KernelFamily : std::uint8_t {
  norm,              // LayerNorm / RMSNorm (apex or Megatron's fused kernel vs eager RMSNorm)
  activation,        // bias-GeLU or SwiGLU (one kernel vs silu and mul, bias add and gelu)
  rope,              // rotary embedding on q and k (one kernel vs mul, rotate_half, mul, add)
  softmax,           // standard attention's scale-mask-softmax
  bias_dropout_add,  // bias + dropout + residual add after a row-parallel layer
  cross_entropy,     // the LM head's vocab-parallel cross-entropy
};
inline constexpr int kNumKernelFamilies = 6;

// A set of families, one bit each.
constexpr std::uint8_t family_bit(KernelFamily f) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(f));
}

// engine::Kernel::variant of an attention kernel that is FlashAttention 1.x's (0: the
// FlashAttention-2-class kernel), costed by kernel_cost.hpp's is_flash1.
inline constexpr std::uint8_t kFlash1Variant = 1;

}  // namespace clustersim::models::kernels
