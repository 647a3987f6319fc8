#include "calibrate/cuda/gemm_fp8.hpp"

#include <cublasLt.h>

#include <array>
#include <memory>
#include <type_traits>

#include "calibrate/cuda/cuda_util.hpp"

namespace clustersim::calibrate::cuda {

namespace {

// cuBLASLt heuristic candidates timed per shape.
constexpr int kCandidates = 8;

// cuBLASLt's descriptors released on every path.
template <class T, cublasStatus_t (*Destroy)(T)>
struct Destroyer {
  void operator()(T p) const { Destroy(p); }
};
template <class T, cublasStatus_t (*Destroy)(T)>
using Owned = std::unique_ptr<std::remove_pointer_t<T>, Destroyer<T, Destroy>>;

using Handle = Owned<cublasLtHandle_t, cublasLtDestroy>;
using OpDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

Layout layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::uint64_t batch) {
  cublasLtMatrixLayout_t l = nullptr;
  CS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, static_cast<std::int64_t>(rows)));
  Layout owned(l);
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    const auto stride = static_cast<std::int64_t>(rows * cols);
    CS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count));
    CS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof stride));
  }
  return owned;
}

}  // namespace

double time_fp8_gemm(cudaStream_t stream, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                     std::uint64_t batch, const void* a, const void* b, void* c, void* workspace,
                     std::size_t workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  CS_CHECK(cublasLtCreate(&h));
  Handle handle(h);
  cublasLtMatmulDesc_t d = nullptr;
  CS_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  OpDesc op(d);
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  CS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &transposed,
                                          sizeof transposed));
  CS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain));
  // Per-tensor scales of 1, as Transformer Engine passes its scales (device scalars): without
  // scale pointers cuBLASLt may offer other algorithms than a framework gets.
  const float unit = 1.0f;
  DeviceBuffer scale(sizeof unit);
  CS_CHECK(cudaMemcpy(scale.get(), &unit, sizeof unit, cudaMemcpyHostToDevice));
  const void* scale_ptr = scale.get();
  CS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_ptr,
                                          sizeof scale_ptr));
  CS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_ptr,
                                          sizeof scale_ptr));
  const Layout la = layout(CUDA_R_8F_E4M3, k, m, batch);
  const Layout lb = layout(CUDA_R_8F_E4M3, k, n, batch);
  const Layout lc = layout(CUDA_R_16BF, m, n, batch);
  cublasLtMatmulPreference_t p = nullptr;
  CS_CHECK(cublasLtMatmulPreferenceCreate(&p));
  Preference pref(p);
  CS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace_bytes, sizeof workspace_bytes));
  std::array<cublasLtMatmulHeuristicResult_t, kCandidates> candidates{};
  int found = 0;
  CS_CHECK(cublasLtMatmulAlgoGetHeuristic(h, d, la.get(), lb.get(), lc.get(), lc.get(), p,
                                          kCandidates, candidates.data(), &found));
  const float alpha = 1.0f, beta = 0.0f;
  const auto gemm_with = [&](const cublasLtMatmulAlgo_t& algo) {
    return [&, algo] {
      CS_CHECK(cublasLtMatmul(h, d, &alpha, a, la.get(), b, lb.get(), &beta, c, lc.get(), c,
                              lc.get(), &algo, workspace, workspace_bytes, stream));
    };
  };
  // The heuristic's first choice is not always the fastest (a framework that autotunes, as
  // cuBLAS's own tuning does, gets the fastest): each candidate is timed briefly, the fastest
  // then for 50 ms. One that fails to run is passed over.
  const cublasLtMatmulAlgo_t* best = nullptr;
  double best_s = 0;
  for (int i = 0; i < found; ++i) {
    if (candidates[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
    const cublasLtMatmulAlgo_t& algo = candidates[static_cast<std::size_t>(i)].algo;
    try {
      const double s = time_on_stream(stream, 3, gemm_with(algo));
      if (best == nullptr || s < best_s) {
        best = &algo;
        best_s = s;
      }
    } catch (const CudaError&) {
    }
  }
  if (best == nullptr) throw CudaError("cuBLASLt has no fp8 algorithm for this shape");
  return time_for_50ms(stream, gemm_with(*best));
}

}  // namespace clustersim::calibrate::cuda
