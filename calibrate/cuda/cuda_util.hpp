// Error checks and RAII holders for the CUDA backend's host code. A failed CUDA, cuBLAS or NCCL
// call throws with the call, the library's message and where it was made; buffers and events are
// released on every path, so an exception never leaks device memory.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::calibrate::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(cudaError_t e, const char* call, const char* where) {
  if (e != cudaSuccess)
    throw CudaError(std::string(call) + ": " + cudaGetErrorString(e) + " (" + where + ")");
}
inline void check(ncclResult_t e, const char* call, const char* where) {
  if (e != ncclSuccess)
    throw CudaError(std::string(call) + ": " + ncclGetErrorString(e) + " (" + where + ")");
}
inline void check(cublasStatus_t e, const char* call, const char* where) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(e)) +
                    " (" + where + ")");
}

#define CLUSTERSIM_STR2(x) #x
#define CLUSTERSIM_STR(x) CLUSTERSIM_STR2(x)
#define CS_CHECK(call) \
  ::clustersim::calibrate::cuda::check((call), #call, __FILE__ ":" CLUSTERSIM_STR(__LINE__))

// Device memory on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) { CS_CHECK(cudaMalloc(&p_, bytes)); }
  ~DeviceBuffer() {
    if (p_ != nullptr) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  float* floats() const { return static_cast<float*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (pinned: DMA at full PCIe speed).
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) { CS_CHECK(cudaMallocHost(&p_, bytes)); }
  ~PinnedBuffer() { cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Stream {
 public:
  Stream() { CS_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Seconds per call of `launch` on `stream`: one warm-up call, then the mean of `iterations`
// calls between two events (the GPU's own clock, free of launch jitter on the host).
inline double time_on_stream(cudaStream_t stream, int iterations,
                             const std::function<void()>& launch) {
  cudaEvent_t begin = nullptr, end = nullptr;
  CS_CHECK(cudaEventCreate(&begin));
  CS_CHECK(cudaEventCreate(&end));
  float ms = 0.0f;
  try {
    launch();
    CS_CHECK(cudaEventRecord(begin, stream));
    for (int i = 0; i < iterations; ++i)
      launch();
    CS_CHECK(cudaEventRecord(end, stream));
    CS_CHECK(cudaEventSynchronize(end));
    CS_CHECK(cudaEventElapsedTime(&ms, begin, end));
  } catch (...) {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    throw;
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return static_cast<double>(ms) * 1e-3 / iterations;
}

// Seconds per call of `launch`, timed over about 50 ms of calls (3 to 100) after one timed to size
// the run: long enough to smooth the clock's ramp, short enough for a sweep of hundreds of shapes.
inline double time_for_50ms(cudaStream_t stream, const std::function<void()>& launch) {
  const double once = time_on_stream(stream, 1, launch);
  const int iters = std::clamp(static_cast<int>(0.05 / std::max(once, 1e-6)), 3, 100);
  return time_on_stream(stream, iters, launch);
}

// Calls `step(phase)` after each measurement; it reports progress and throws Cancelled.
using StepFn = std::function<void(std::string_view)>;

}  // namespace clustersim::calibrate::cuda
