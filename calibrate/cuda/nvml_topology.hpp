// GPU-to-GPU connections read from NVML (the driver's management library), where present.
#pragma once

#include "calibrate/measurements.hpp"

namespace clustersim::calibrate::cuda {

// Fills p.gpu_links ("NV12", "PIX", "PXB", "PHB", "NODE", "SYS" as nvidia-smi prints them) and
// p.fabric from NVML. libnvidia-ml is opened at run time (dlopen), so the program starts on
// machines without a driver; returns false when NVML is missing or fails, and the caller falls
// back to parsing `nvidia-smi topo -m`.
bool read_nvml_topology(Provenance& p);

}  // namespace clustersim::calibrate::cuda
