// The CUDA backend (docs/calibration.md "Backends"): inventory, copies, cuBLAS GEMMs and NCCL
// collectives over all local GPUs in one process, printed as it goes; stops between steps on
// Ctrl-C. Without a GPU it fails at once with BackendUnavailable (exit 1), before measuring.
#include "calibrate/cuda/cuda_backend.hpp"

#include "calibrate/cuda/cuda_bench.hpp"

namespace clustersim::calibrate {

BenchResult run_cuda_benchmarks(const BenchOptions& options) {
  BenchResult result;
  Provenance& p = result.provenance;
  p.backend = "cuda";
  p.host = host_name();
  p.date = utc_now_iso8601();
  cuda::take_inventory(p);
  if (options.table != nullptr) cuda::print_inventory(*options.table, p);
  const int devices = static_cast<int>(p.devices.size());
  const std::size_t total = cuda::copy_steps(devices, options.quick) +
                            cuda::gemm_steps(options.quick, options.gemm_shapes.size()) +
                            cuda::nccl_steps(devices, options.quick);
  std::size_t done = 0;
  const cuda::StepFn step = [&](std::string_view phase) {
    ++done;
    if (options.progress) options.progress(phase, done, total);
    if (options.cancelled && options.cancelled()) throw Cancelled();
  };
  Measurements& m = result.measurements;
  try {
    cuda::measure_copies(devices, options.quick, options.table, step, m.copies);
    cuda::measure_gemms(options.quick, options.gemm_shapes, options.table, step, m.gemms);
    cuda::measure_collectives(devices, options.quick, options.table, step, m.collectives);
  } catch (const cuda::CudaError& e) {
    throw std::runtime_error(std::string("cuda backend: ") + e.what());
  }
  return result;
}

}  // namespace clustersim::calibrate
