// Internal to models/kernels: the pieces of a transformer block's kernel lists that live in files
// of their own (transformer_kernels.cpp composes them).
#pragma once

#include <string>

#include "models/kernels/kernel_emitter.hpp"
#include "models/kernels/transformer_kernels.hpp"

namespace clustersim::models::kernels::detail {

// A linear layer's kernels: forward GEMM, or backward dgrad + wgrad (+ bias grad reduction), of
// T rows, n outputs and k inputs, elements of `e` bytes.
void linear(Emitter& em, const std::string& name, Pass pass, double T, double n, double k,
            bool bias, double e, bool dgrad = true);

// The attention core: flash (FA2-class or FA1) or standard (attention_kernels.cpp).
void core_attention(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x, Pass pass);

// Multi-head latent attention's projections (latent_attention_kernels.cpp).
void latent_projections(Emitter& em, const TransformerKernelConfig& c, const LayerDims& x,
                        Pass pass);

}  // namespace clustersim::models::kernels::detail
