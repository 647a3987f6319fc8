// fp8 GEMMs through cuBLASLt (gemm_bench.cpp uses it for the fp8 rows). cublasGemmEx has no fp8
// path: fp8 needs cuBLASLt, and on Hopper only the "TN" layout (A transposed, B not, both
// column-major), which is how Transformer Engine lays out its fp8 operands (it keeps transposed
// copies of the casts). So an fp8 request is timed as TN whatever transposes the scenario gave it;
// gemm_bench.cpp passes the row-major product Cᵀ = Bᵀ·Aᵀ, as Transformer Engine issues it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace clustersim::calibrate::cuda {

// Seconds per call of D[m×n] (bf16) = Aᵀ·B with A k×m and B k×n in e4m3, fp32 accumulation,
// per-tensor scales of 1, `batch` of them strided; the fastest of cuBLASLt's first 8 heuristic
// candidates with `workspace_bytes` of workspace.
// a, b hold at least batch·k·max(m, n) bytes, c at least 2·batch·m·n. About 50 ms of calls are
// timed after one untimed call. Throws CudaError when cuBLASLt has no algorithm or fails.
double time_fp8_gemm(cudaStream_t stream, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                     std::uint64_t batch, const void* a, const void* b, void* c, void* workspace,
                     std::size_t workspace_bytes);

}  // namespace clustersim::calibrate::cuda
