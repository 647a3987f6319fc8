#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "calibrate/cuda/kernels.hpp"

namespace clustersim::calibrate::cuda {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b == 0 ? 1 : b) : 65535);
}

__device__ float pattern(std::size_t i, float a, float b, std::size_t chunk) {
  return a + b * static_cast<float>(i / chunk);
}

__global__ void fill_pattern_kernel(float* x, std::size_t n, float a, float b, std::size_t chunk) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    x[i] = pattern(i, a, b, chunk);
}

__global__ void count_kernel(const float* x, std::size_t n, float a, float b, std::size_t chunk,
                             unsigned long long* wrong) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    local += x[i] != pattern(i, a, b, chunk) ? 1ull : 0ull;
  if (local != 0) atomicAdd(wrong, local);
}

template <class T>
__global__ void operand_kernel(T* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    x[i] = static_cast<T>(static_cast<float>(i % 7) * 0.125f - 0.375f);
}

}  // namespace

void fill_pattern(float* x, std::size_t n, float a, float b, std::size_t chunk, cudaStream_t s) {
  fill_pattern_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, n, a, b, chunk == 0 ? 1 : chunk);
}

void count_mismatches(const float* x, std::size_t n, float a, float b, std::size_t chunk,
                      unsigned long long* wrong, cudaStream_t s) {
  count_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, n, a, b, chunk == 0 ? 1 : chunk, wrong);
}

void fill_operand(void* x, std::size_t n, Element type, cudaStream_t s) {
  switch (type) {
    case Element::f32:
      operand_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<float*>(x), n);
      break;
    case Element::f16:
      operand_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__half*>(x), n);
      break;
    case Element::bf16:
      operand_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(x), n);
      break;
    case Element::f8e4m3:
      operand_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(x), n);
      break;
  }
}

}  // namespace clustersim::calibrate::cuda
