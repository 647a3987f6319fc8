// cuBLAS GEMM throughput on GPU 0 over a grid of shapes: squares plus the rectangular shapes of a
// transformer layer's projections, in fp32, tf32, fp16 and bf16 with fp32 accumulation (as mixed
// precision training runs them) and fp8 (e4m3 in, bf16 out, through cuBLASLt: gemm_fp8.hpp); then
// the shapes a scenario launches, when asked (`--shapes-from`), batched and transposed as the
// scenario has them (fp8 always as TN, the one layout Hopper's fp8 GEMMs take).
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "calibrate/cuda/cuda_bench.hpp"
#include "calibrate/cuda/gemm_fp8.hpp"
#include "calibrate/cuda/kernels.hpp"

namespace clustersim::calibrate::cuda {

namespace {

struct Dtype {
  const char* name;
  cudaDataType_t data;  // of A and B; C is bf16 for fp8, else this
  cublasComputeType_t compute;
  Element element;
  std::size_t bytes;      // an element of A or B
  std::size_t out_bytes;  // an element of C
  int min_cc;             // 10·major + minor: tf32/bf16 from Ampere (80), fp8 from Ada (89)
  std::uint64_t max_dim;  // fp32 is slow: keep the sweep short
  bool lt;                // through cuBLASLt (fp8) rather than cublasGemmEx
};

constexpr std::array<Dtype, 5> kDtypes = {{
    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, Element::f32, 4, 4, 0, 8192, false},
    {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Element::f32, 4, 4, 80, 8192, false},
    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, Element::f16, 2, 2, 0, 16384, false},
    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::bf16, 2, 2, 80, 16384, false},
    {"fp8", CUDA_R_8F_E4M3, CUBLAS_COMPUTE_32F, Element::f8e4m3, 1, 2, 89, 16384, true},
}};

// cuBLASLt's workspace for fp8 (NVIDIA's recommendation for Hopper is 32 MiB).
constexpr std::size_t kLtWorkspace = std::size_t{32} << 20;

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

// The dtype row of `name`, if this sweep knows it.
const Dtype* dtype_named(const std::string& name) {
  for (const Dtype& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

// One GEMM as the model states it: row-major, as PyTorch and Megatron write it,
// C[m×n] = op(A)[m×k] · op(B)[k×n] (a linear layer's forward: m tokens, n output features,
// trans_b for the weight stored [n×k]).
struct Call {
  std::uint64_t m, n, k, batch;
  bool trans_a, trans_b;
};

// Times `call` in `d` on operands a, b, c (each large enough): about 50 ms of calls, 3 to 100.
// cuBLAS is column-major, so the row-major product is issued as PyTorch issues it, Cᵀ = op(B)ᵀ ·
// op(A)ᵀ: cuBLAS's m is the call's n and its first operand is B. Which dimension is the leading
// one matters: a token count that is not a multiple of 8 as cuBLAS's m (the leading dimension of
// C) costs cuBLAS its vectorized tensor-core kernels, as a framework's GEMM never asks.
double time_gemm(cublasHandle_t handle, cudaStream_t stream, const Dtype& d, const Call& call,
                 const void* a, const void* b, void* c, void* workspace) {
  if (d.lt)  // TN in cuBLAS's terms: Bᵀ (the weight, [n×k]) times Aᵀ, every leading dimension k
    return time_fp8_gemm(stream, call.n, call.m, call.k, call.batch, b, a, c, workspace,
                         kLtWorkspace);
  const float alpha = 1.0f, beta = 0.0f;
  const auto m = static_cast<int>(call.n), n = static_cast<int>(call.m),
             k = static_cast<int>(call.k), batch = static_cast<int>(call.batch);
  // cuBLAS's first operand is the row-major B: stored [k×n] (col-major n×k, ld n) or, when
  // transposed, [n×k] (col-major k×n, ld k); its second is A likewise.
  const cublasOperation_t op_first = call.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = call.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ld_first = call.trans_b ? k : m, ld_second = call.trans_a ? n : k;
  const auto gemm = [&] {
    if (batch == 1) {
      CS_CHECK(cublasGemmEx(handle, op_first, op_second, m, n, k, &alpha, b, d.data, ld_first, a,
                            d.data, ld_second, &beta, c, d.data, m, d.compute,
                            CUBLAS_GEMM_DEFAULT));
    } else {
      CS_CHECK(cublasGemmStridedBatchedEx(
          handle, op_first, op_second, m, n, k, &alpha, b, d.data, ld_first,
          static_cast<long long>(m) * k, a, d.data, ld_second, static_cast<long long>(k) * n, &beta,
          c, d.data, m, static_cast<long long>(m) * n, batch, d.compute, CUBLAS_GEMM_DEFAULT));
    }
  };
  return time_for_50ms(stream, gemm);
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
    return std::max({r.m * r.k * d.bytes, r.k * r.n * d.bytes, r.m * r.n * d.out_bytes}) * r.batch;
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
  DeviceBuffer a(largest), b(largest), c(largest), workspace(kLtWorkspace);
  const int cc = 10 * prop.major + prop.minor;
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
  const auto note = [&](const Dtype& d, const Call& call, const std::string& why) {
    if (table != nullptr)
      *table << "  " << d.name << " " << call.m << "x" << call.n << "x" << call.k << " (batch "
             << call.batch << "): not measured, " << why << "\n";
  };
  // Times one GEMM and records it. cuBLASLt refuses some fp8 shapes (no algorithm for a k or
  // leading dimension that is not a multiple of 16): that shape is noted and the sweep goes on.
  const auto measure = [&](const Dtype& d, const Call& call) {
    fill(d);
    double seconds = 0;
    try {
      seconds =
          time_gemm(handle, stream.get(), d, call, a.get(), b.get(), c.get(), workspace.get());
    } catch (const CudaError& e) {
      if (!d.lt) throw;
      note(d, call, e.what());
      return;
    }
    GemmMeasurement g{call.m, call.n, call.k, d.name, seconds, call.batch};
    print_row(table, g);
    out.push_back(g);
  };
  for (const Dtype& d : kDtypes) {
    for (const Shape& s : grid) {
      if (cc >= d.min_cc && std::max({s.m, s.n, s.k}) <= d.max_dim)
        measure(d, {s.m, s.n, s.k, 1, false, false});
      step("gemm");
    }
  }
  for (const GemmRequest& r : requested) {
    const Dtype* d = dtype_named(r.dtype);
    const Call call{r.m, r.n, r.k, r.batch, r.trans_a, r.trans_b};
    if (d == nullptr) {
      if (table != nullptr)
        *table << "  " << r.dtype << " " << r.m << "x" << r.n << "x" << r.k << " (batch " << r.batch
               << "): not measured, no cuBLAS GEMM path here\n";
    } else if (cc < d->min_cc) {
      note(*d, call, "needs a newer GPU");
    } else if (too_large(r, *d)) {
      note(*d, call, "operands larger than a twelfth of free memory");
    } else {
      measure(*d, call);
    }
    step("gemm (scenario)");
  }
}

}  // namespace clustersim::calibrate::cuda
