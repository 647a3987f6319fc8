// ResNet-50's kernel lists (a layer-list model with known shapes), built with the same kernel
// descriptors as the transformer lists (transformer_kernels.hpp).
#pragma once

#include <string>
#include <vector>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"

namespace clustersim::models::kernels {

// ResNet-50 (torchvision v1.5, 224 × 224, NHWC) per layer of models/resnet50.cpp's list:
// convolutions as implicit GEMMs (m = N·P·Q, n = K, k = C·R·S), batch norm, ReLU, pooling,
// residual adds, fc. Backward: dgrad (m = N·H·W, n = C, k = K·R·S / stride²: strided dgrad skips
// the structural zeros) and wgrad (m = K, n = C·R·S, k = N·P·Q) per conv; conv1 has no dgrad (the
// image needs no gradient).
struct LayerKernels {
  std::string layer;  // "conv1", "layer1.0", ..., "fc"
  std::vector<engine::Kernel> forward;
  std::vector<engine::Kernel> backward;
};
std::vector<LayerKernels> resnet50_kernels(long batch, engine::KernelTable& names,
                                           Precision dtype = Precision::bf16,
                                           bool fused_bn_relu = false);

}  // namespace clustersim::models::kernels
