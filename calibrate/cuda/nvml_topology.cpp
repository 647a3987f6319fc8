#include "calibrate/cuda/nvml_topology.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <vector>

namespace clustersim::calibrate::cuda {

namespace {

// The few NVML entry points used, as the C ABI of libnvidia-ml.so.1 declares them (its header
// does not ship with every CUDA installation; the library comes with the driver).
using NvmlReturn = int;  // NVML_SUCCESS = 0
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kTopologyInternal = 0, kTopologySingle = 10, kTopologyMultiple = 20,
              kTopologyHostBridge = 30, kTopologyNode = 40;
constexpr int kP2pCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2pStatusOk = 0;
constexpr unsigned kMaxNvlinks = 18;  // NVML_NVLINK_MAX_LINKS (Hopper)

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*count)(unsigned*) = nullptr;
  NvmlReturn (*handle)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*ancestor)(NvmlDevice, NvmlDevice, int*) = nullptr;
  NvmlReturn (*p2p)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
  NvmlReturn (*nvlink_state)(NvmlDevice, unsigned, int*) = nullptr;
};

template <typename F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  return f != nullptr;
}

std::string pcie_level(int level) {
  switch (level) {
    case kTopologyInternal:
    case kTopologySingle:
      return "PIX";
    case kTopologyMultiple:
      return "PXB";
    case kTopologyHostBridge:
      return "PHB";
    case kTopologyNode:
      return "NODE";
    default:
      return "SYS";
  }
}

}  // namespace

bool read_nvml_topology(Provenance& p) {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  Nvml n;
  const bool bound = bind(lib, "nvmlInit_v2", n.init) && bind(lib, "nvmlShutdown", n.shutdown) &&
                     bind(lib, "nvmlDeviceGetCount_v2", n.count) &&
                     bind(lib, "nvmlDeviceGetHandleByIndex_v2", n.handle) &&
                     bind(lib, "nvmlDeviceGetTopologyCommonAncestor", n.ancestor) &&
                     bind(lib, "nvmlDeviceGetP2PStatus", n.p2p) &&
                     bind(lib, "nvmlDeviceGetNvLinkState", n.nvlink_state);
  if (!bound || n.init() != 0) {
    ::dlclose(lib);
    return false;
  }
  bool ok = true;
  unsigned count = 0;
  std::vector<NvmlDevice> devices;
  std::vector<int> links;  // active NVLinks per GPU
  if (n.count(&count) != 0) ok = false;
  for (unsigned i = 0; ok && i < count; ++i) {
    NvmlDevice d = nullptr;
    if (n.handle(i, &d) != 0) {
      ok = false;
      break;
    }
    int active = 0;
    for (unsigned l = 0; l < kMaxNvlinks; ++l) {
      int state = 0;
      if (n.nvlink_state(d, l, &state) == 0 && state != 0) ++active;
    }
    devices.push_back(d);
    links.push_back(active);
  }
  std::vector<DeviceLink> found;
  bool all_nvlink = count > 1;
  for (unsigned i = 0; ok && i < count; ++i)
    for (unsigned j = i + 1; j < count; ++j) {
      int status = 1, level = 0;
      std::string link;
      // Through NVSwitches every pair reports NVLink P2P; nvidia-smi prints the GPU's links (NV12).
      if (n.p2p(devices[i], devices[j], kP2pCapsNvlink, &status) == 0 && status == kP2pStatusOk)
        link = "NV" + std::to_string(std::min(links[i], links[j]));
      else if (n.ancestor(devices[i], devices[j], &level) == 0)
        link = pcie_level(level);
      else
        ok = false;
      all_nvlink = all_nvlink && link.rfind("NV", 0) == 0;
      found.push_back({"GPU" + std::to_string(i), "GPU" + std::to_string(j), link});
    }
  n.shutdown();
  ::dlclose(lib);
  if (!ok) return false;
  p.gpu_links = std::move(found);
  p.fabric = all_nvlink ? "nvswitch" : "pcie";
  return true;
}

}  // namespace clustersim::calibrate::cuda
