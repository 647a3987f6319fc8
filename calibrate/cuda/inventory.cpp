// GPU inventory: what the CUDA runtime reports for every device, and the GPU-to-GPU connections
// from NVML where the driver provides it, else `nvidia-smi topo -m` read by the project's parser.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "calibrate/backend.hpp"
#include "calibrate/cuda/cuda_bench.hpp"
#include "calibrate/cuda/nvml_topology.hpp"
#include "models/nvidia_smi_topo.hpp"

namespace clustersim::calibrate::cuda {

namespace {

// The parser lives in models/ (a scenario's `node: {from_topo: FILE}` reads it too).
using models::parse_nvidia_smi_topo;
using models::TopoDescription;
using models::TopoLink;
using models::TopoParseError;

// 12040 -> "12.4"
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The output of `command`, empty when it cannot run or fails.
std::string command_output(const char* command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command, "r"), ::pclose);
  if (!pipe) return {};
  std::string text;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0)
    text.append(buf, n);
  const int status = ::pclose(pipe.release());
  return status == 0 ? text : std::string();
}

void read_topology(Provenance& p) {
  const std::string text = command_output("nvidia-smi topo -m 2>/dev/null");
  if (text.empty()) return;
  std::istringstream in(text);
  try {
    const TopoDescription topo = parse_nvidia_smi_topo(in, "nvidia-smi topo -m");
    p.fabric = topo.recommended_fabric();
    for (const auto& pair : topo.gpu_pairs) {
      std::string link = pair.link == TopoLink::nvlink ? "NV" + std::to_string(pair.nvlinks)
                                                       : std::string(to_string(pair.link));
      p.gpu_links.push_back({pair.a, pair.b, link});
    }
  } catch (const TopoParseError& e) {
    std::fprintf(stderr, "note: nvidia-smi topo -m not understood, topology not stored: %s\n",
                 e.what());
  }
}

}  // namespace

void take_inventory(Provenance& p) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw BackendUnavailable(
        std::string("the cuda backend found no usable GPU (cudaGetDeviceCount: ") +
        (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
        "); it needs at least one NVIDIA GPU and its driver. Use --backend mpi for CPUs, or "
        "`clustersim calibrate import-nccl-tests` for logs measured elsewhere");
  int driver = 0, runtime = 0, nccl = 0;
  CS_CHECK(cudaDriverGetVersion(&driver));
  CS_CHECK(cudaRuntimeGetVersion(&runtime));
  CS_CHECK(ncclGetVersion(&nccl));
  p.driver_version = cuda_version(driver);
  p.runtime_version = cuda_version(runtime);
  // NCCL_VERSION_CODE since 2.9: major·10000 + minor·100 + patch.
  p.nccl_version = std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." +
                   std::to_string(nccl % 100);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    CS_CHECK(cudaGetDeviceProperties(&prop, i));
    CS_CHECK(cudaSetDevice(i));
    std::size_t free_bytes = 0, total_bytes = 0;
    CS_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    char bus[32] = {};
    CS_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, i));
    p.devices.push_back({i, prop.name, bus, static_cast<double>(total_bytes),
                         static_cast<double>(free_bytes), prop.major, prop.minor,
                         prop.multiProcessorCount});
  }
  p.gpu = p.devices.front().name;
  p.ranks = static_cast<std::uint32_t>(count);
  p.nodes = 1;
  if (!read_nvml_topology(p)) read_topology(p);
}

void print_inventory(std::ostream& out, const Provenance& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "# CUDA driver %s, runtime %s, NCCL %s\n",
                p.driver_version.c_str(), p.runtime_version.c_str(), p.nccl_version.c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "# %3s  %-32s %-14s %9s %9s %4s %5s\n", "gpu", "name", "pci bus",
                "mem GiB", "free GiB", "cc", "SMs");
  out << buf;
  for (const auto& d : p.devices) {
    std::snprintf(buf, sizeof buf, "  %3d  %-32s %-14s %9.1f %9.1f %2d.%d %5d\n", d.index,
                  d.name.c_str(), d.pci_bus_id.c_str(), d.memory_total / (1u << 30),
                  d.memory_free / (1u << 30), d.cc_major, d.cc_minor, d.sm_count);
    out << buf;
  }
  if (!p.fabric.empty()) {
    out << "# nvidia-smi topo -m: intra-node fabric " << p.fabric << ";";
    for (const auto& l : p.gpu_links)
      out << " " << l.a << "-" << l.b << ":" << l.link;
    out << "\n";
  }
}

}  // namespace clustersim::calibrate::cuda
