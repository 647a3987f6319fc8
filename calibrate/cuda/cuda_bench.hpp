// The CUDA backend's parts (docs/calibration.md "Backends"), run by run_cuda_benchmarks() in
// cuda_backend.cpp: inventory, copies, cuBLAS GEMMs, NCCL collectives over all local GPUs.
#pragma once

#include <ostream>
#include <vector>

#include "calibrate/cuda/cuda_util.hpp"
#include "calibrate/measurements.hpp"

namespace clustersim::calibrate::cuda {

// Every GPU, the driver/runtime/NCCL versions and, when nvidia-smi is there, its topology
// (through parse_nvidia_smi_topo). Throws BackendUnavailable when there is no usable GPU.
void take_inventory(Provenance& p);
void print_inventory(std::ostream& out, const Provenance& p);

// Steps each function will take, for the progress bar.
std::size_t copy_steps(int devices, bool quick);
std::size_t gemm_steps(bool quick, std::size_t requested = 0);
std::size_t nccl_steps(int devices, bool quick);

// d2d (read + write counted), pinned h2d and d2h on GPU 0; peer copies between every ordered pair.
void measure_copies(int devices, bool quick, std::ostream* table, const StepFn& step,
                    std::vector<CopyMeasurement>& out);
// cuBLAS GEMMs on GPU 0 in fp32, tf32, fp16, bf16 (tf32/bf16 from compute capability 8.0) and
// fp8 e4m3 through cuBLASLt (from 8.9). Then the `requested` shapes (a scenario's), batched and
// transposed as asked (fp8 as TN); a dtype this GPU cannot run, or an fp8 shape cuBLASLt refuses,
// is skipped with a line in the table.
void measure_gemms(bool quick, const std::vector<GemmRequest>& requested, std::ostream* table,
                   const StepFn& step, std::vector<GemmMeasurement>& out);
// NCCL collectives over all local GPUs in one process (ncclCommInitAll), each size checked.
void measure_collectives(int devices, bool quick, std::ostream* table, const StepFn& step,
                         std::vector<CollectiveMeasurement>& out);

}  // namespace clustersim::calibrate::cuda
