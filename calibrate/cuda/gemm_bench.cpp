// cuBLAS GEMM throughput on GPU 0 over a grid of shapes: squares plus the rectangular shapes of a
// transformer layer's projections, in fp32, tf32, fp16 and bf16 with fp32 accumulation (as mixed
// precision training runs them); then the shapes a scenario launches, when asked (`--shapes-from`),
// batched and transposed as the scenario has them. fp8 needs cuBLASLt and is not measured
// (docs/calibration.md).
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
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

// The dtype row of `name`, if this sweep knows it (fp8 is not measured).
const Dtype* dtype_named(const std::string& name) {
  for (const Dtype& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

// One GEMM call shape as cuBLAS takes it (column-major).
struct Call {
  std::uint64_t m, n, k, batch;
  bool trans_a, trans_b;
};

// Times `call` in `d` on operands a, b, c (each large enough): about 50 ms of calls, 3 to 100.
double time_gemm(cublasHandle_t handle, cudaStream_t stream, const Dtype& d, const Call& call,
                 const void* a, const void* b, void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  const auto m = static_cast<int>(call.m), n = static_cast<int>(call.n),
             k = static_cast<int>(call.k), batch = static_cast<int>(call.batch);
  const cublasOperation_t op_a = call.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = call.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Leading dimensions of A and B as stored: op(A) is m×k, so A is k×m when transposed.
  const int lda = call.trans_a ? k : m, ldb = call.trans_b ? n : k;
  const auto gemm = [&] {
    if (batch == 1) {
      CS_CHECK(cublasGemmEx(handle, op_a, op_b, m, n, k, &alpha, a, d.data, lda, b, d.data, ldb,
                            &beta, c, d.data, m, d.compute, CUBLAS_GEMM_DEFAULT));
    } else {
      CS_CHECK(cublasGemmStridedBatchedEx(
          handle, op_a, op_b, m, n, k, &alpha, a, d.data, lda, static_cast<long long>(m) * k, b,
          d.data, ldb, static_cast<long long>(k) * n, &beta, c, d.data, m,
          static_cast<long long>(m) * n, batch, d.compute, CUBLAS_GEMM_DEFAULT));
    }
  };
  const double once = time_on_stream(stream, 1, gemm);
  const int iters = std::clamp(static_cast<int>(0.05 / std::max(once, 1e-6)), 3, 100);
  return time_on_stream(stream, iters, gemm);
}

void print_row(std::ostream* table, const GemmMeasurement& g) {
  if (table == nullptr) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %5s %7llu %7llu %7llu %5llu %12.2f %9.1f\n", g.dtype.c_str(),
                static_cast<unsigned long long>(g.m), static_cast<unsigned long long>(g.n),
                static_cast<unsigned long long>(g.k), static_cast<unsigned long long>(g.batch),
                g.seconds * 1e6, g.flops_per_s() / 1e12);
  *table << buf;
}

}  // namespace

std::size_t gemm_steps(bool quick, std::size_t requested) {
  return kDtypes.size() * shapes(quick).size() + requested;
}

void measure_gemms(bool quick, const std::vector<GemmRequest>& requested, std::ostream* table,
                   const StepFn& step, std::vector<GemmMeasurement>& out) {
  CS_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CS_CHECK(cudaGetDeviceProperties(&prop, 0));
  const auto grid = shapes(quick);
  // Operand bytes: the grid at 4 bytes an element, each request at its dtype's.
  std::uint64_t largest = 0;
  for (const auto& s : grid)
    largest = std::max({largest, s.m * s.k, s.k * s.n, s.m * s.n});
  largest *= 4;
  // A request whose operands would not fit three to a quarter of the free memory is left out
  // (a logits GEMM of a large vocabulary and micro-batch), with a line in the table.
  std::size_t free_bytes = 0, total_bytes = 0;
  CS_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto operand_bytes = [](const GemmRequest& r, const Dtype& d) {
    return std::max({r.m * r.k, r.k * r.n, r.m * r.n}) * r.batch * d.bytes;
  };
  const auto too_large = [&](const GemmRequest& r, const Dtype& d) {
    return operand_bytes(r, d) > free_bytes / 12;
  };
  for (const auto& r : requested)
    if (const Dtype* d = dtype_named(r.dtype); d != nullptr && !too_large(r, *d))
      largest = std::max(largest, operand_bytes(r, *d));
  Stream stream;
  cublasHandle_t handle = nullptr;
  CS_CHECK(cublasCreate(&handle));
  std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> owner(handle, cublasDestroy);
  CS_CHECK(cublasSetStream(handle, stream.get()));
  DeviceBuffer a(largest), b(largest), c(largest);
  if (table != nullptr)
    *table << "# cuBLAS GEMM on GPU 0 (" << prop.name << ")\n#  dtype       m       n       k"
           << " batch    time (us)   TFLOP/s\n";
  const Dtype* filled = nullptr;  // operands hold values of this dtype
  const auto fill = [&](const Dtype& d) {
    if (filled == &d) return;
    fill_operand(a.get(), largest / d.bytes, d.element, stream.get());
    fill_operand(b.get(), largest / d.bytes, d.element, stream.get());
    filled = &d;
  };
  for (const Dtype& d : kDtypes) {
    for (const Shape& s : grid) {
      if (prop.major < d.min_cc_major || std::max({s.m, s.n, s.k}) > d.max_dim) {
        step("gemm");
        continue;
      }
      fill(d);
      GemmMeasurement g{s.m, s.n, s.k, d.name,
                        time_gemm(handle, stream.get(), d, {s.m, s.n, s.k, 1, false, false},
                                  a.get(), b.get(), c.get())};
      print_row(table, g);
      out.push_back(g);
      step("gemm");
    }
  }
  for (const GemmRequest& r : requested) {
    const Dtype* d = dtype_named(r.dtype);
    if (d == nullptr || prop.major < d->min_cc_major || too_large(r, *d)) {
      if (table != nullptr)
        *table << "  " << r.dtype << " " << r.m << "x" << r.n << "x" << r.k << " (batch " << r.batch
               << "): not measured, "
               << (d == nullptr                   ? "no cuBLAS GEMM path here"
                   : prop.major < d->min_cc_major ? "needs a newer GPU"
                                                  : "operands larger than a twelfth of free memory")
               << "\n";
      step("gemm (scenario)");
      continue;
    }
    fill(*d);
    GemmMeasurement g{
        r.m,
        r.n,
        r.k,
        d->name,
        time_gemm(handle, stream.get(), *d, {r.m, r.n, r.k, r.batch, r.trans_a, r.trans_b}, a.get(),
                  b.get(), c.get()),
        r.batch};
    print_row(table, g);
    out.push_back(g);
    step("gemm (scenario)");
  }
}

}  // namespace clustersim::calibrate::cuda
