// cuBLAS GEMM throughput on GPU 0 over a grid of shapes: squares plus the rectangular shapes of a
// transformer layer's projections, in fp32, tf32, fp16 and bf16 with fp32 accumulation (as mixed
// precision training runs them). fp8 needs cuBLASLt and is not measured (docs/calibration.md).
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "calibrate/cuda/cuda_bench.hpp"
#include "calibrate/cuda/kernels.hpp"

namespace clustersim::calibrate::cuda {

namespace {

struct Dtype {
  const char* name;
  cudaDataType_t data;
  cublasComputeType_t compute;
  Element element;
  std::size_t bytes;
  int min_cc_major;       // tf32 and bf16 tensor cores start with Ampere (8.0)
  std::uint64_t max_dim;  // fp32 is slow: keep the sweep short
};

constexpr std::array<Dtype, 4> kDtypes = {{
    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, Element::f32, 4, 0, 8192},
    {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Element::f32, 4, 8, 8192},
    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, Element::f16, 2, 0, 16384},
    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::bf16, 2, 8, 16384},
}};

struct Shape {
  std::uint64_t m, n, k;
};

std::vector<Shape> shapes(bool quick) {
  std::vector<Shape> out;
  for (std::uint64_t s = quick ? 1024 : 256; s <= (quick ? 8192u : 16384u); s *= 2)
    out.push_back({s, s, s});
  if (!quick) {
    // 8192 tokens through a 4096-wide layer: QKV-like, MLP up and MLP down projections.
    out.push_back({8192, 4096, 4096});
    out.push_back({8192, 16384, 4096});
    out.push_back({8192, 4096, 16384});
  }
  return out;
}

}  // namespace

std::size_t gemm_steps(bool quick) {
  return kDtypes.size() * shapes(quick).size();
}

void measure_gemms(bool quick, std::ostream* table, const StepFn& step,
                   std::vector<GemmMeasurement>& out) {
  CS_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CS_CHECK(cudaGetDeviceProperties(&prop, 0));
  const auto grid = shapes(quick);
  std::uint64_t largest = 0;
  for (const auto& s : grid)
    largest = std::max({largest, s.m * s.k, s.k * s.n, s.m * s.n});
  Stream stream;
  cublasHandle_t handle = nullptr;
  CS_CHECK(cublasCreate(&handle));
  std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> owner(handle, cublasDestroy);
  CS_CHECK(cublasSetStream(handle, stream.get()));
  DeviceBuffer a(largest * 4), b(largest * 4), c(largest * 4);
  if (table != nullptr)
    *table << "# cuBLAS GEMM on GPU 0 (" << prop.name << ")\n#  dtype       m       n       k"
           << "    time (us)   TFLOP/s\n";
  for (const Dtype& d : kDtypes) {
    fill_operand(a.get(), largest, d.element, stream.get());
    fill_operand(b.get(), largest, d.element, stream.get());
    for (const Shape& s : grid) {
      if (prop.major < d.min_cc_major || std::max({s.m, s.n, s.k}) > d.max_dim) {
        step("gemm");
        continue;
      }
      const float alpha = 1.0f, beta = 0.0f;
      const auto m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
      const auto gemm = [&] {
        CS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.get(), d.data, m,
                              b.get(), d.data, k, &beta, c.get(), d.data, m, d.compute,
                              CUBLAS_GEMM_DEFAULT));
      };
      // One timed call sizes the run: about 50 ms of GEMMs, 3 to 100 calls.
      const double once = time_on_stream(stream.get(), 1, gemm);
      const int iters = std::clamp(static_cast<int>(0.05 / std::max(once, 1e-6)), 3, 100);
      GemmMeasurement g{s.m, s.n, s.k, d.name, time_on_stream(stream.get(), iters, gemm)};
      if (table != nullptr) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "  %5s %7llu %7llu %7llu %12.2f %9.1f\n", d.name,
                      static_cast<unsigned long long>(g.m), static_cast<unsigned long long>(g.n),
                      static_cast<unsigned long long>(g.k), g.seconds * 1e6,
                      g.flops_per_s() / 1e12);
        *table << buf;
      }
      out.push_back(g);
      step("gemm");
    }
  }
}

}  // namespace clustersim::calibrate::cuda
