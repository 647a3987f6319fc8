// The few device kernels the CUDA backend needs (kernels.cu): patterned buffers for the NCCL
// correctness check and GEMM operands. Everything else is host API calls in the .cpp files, which
// the C++ compiler builds with the project's warnings; only this part goes through nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace clustersim::calibrate::cuda {

enum class Element { f32, f16, bf16, f8e4m3 };

// x[i] = a + b·⌊i / chunk⌋ (floats; small integers stay exact).
void fill_pattern(float* x, std::size_t n, float a, float b, std::size_t chunk, cudaStream_t s);
// Adds to *wrong (device memory) how many x[i] differ from a + b·⌊i / chunk⌋.
void count_mismatches(const float* x, std::size_t n, float a, float b, std::size_t chunk,
                      unsigned long long* wrong, cudaStream_t s);
// A GEMM operand of n elements: small values that repeat (zeros would flatter the power draw).
void fill_operand(void* x, std::size_t n, Element type, cudaStream_t s);

}  // namespace clustersim::calibrate::cuda
