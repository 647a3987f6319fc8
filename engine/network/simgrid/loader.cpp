// Opens the simgrid plugin (libclustersim_simgrid.so, engine/CMakeLists.txt) the first time a run
// asks for the simgrid model. Programs never link SimGrid: it exports MPI_* (SMPI), which would
// replace a real MPI's in the MPI back ends, and it costs every start-up about 6 MB.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/network/model_parts.hpp"

namespace clustersim::engine::detail {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPlugin = "libclustersim_simgrid.so";
constexpr const char* kFactory = "clustersim_make_simgrid_model";

// Where to look, first found wins: $CLUSTERSIM_SIMGRID_PLUGIN; beside the program or module that
// holds this code (the installed Python module has the plugin next to it); its ../lib/clustersim;
// the build tree it came from.
std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("CLUSTERSIM_SIMGRID_PLUGIN"); env != nullptr && *env != 0)
    paths.emplace_back(env);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidates), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path self = fs::canonical(fs::path(info.dli_fname), ec);
    if (!ec) {
      paths.push_back((self.parent_path() / kPlugin).string());
      paths.push_back((self.parent_path().parent_path() / "lib" / "clustersim" / kPlugin).string());
    }
  }
  paths.emplace_back(CLUSTERSIM_SIMGRID_PLUGIN_PATH);
  return paths;
}

using Factory = NetworkModel* (*)(const Topology&, const CollectiveProfile*, const NetworkOptions&);

Factory open_plugin() {
  std::string tried;
  for (const std::string& path : candidates()) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: one SimGrid
    if (handle == nullptr) {
      const char* why = ::dlerror();
      throw std::runtime_error("cannot load the simgrid network model from " + path + ": " +
                               (why != nullptr ? why : "unknown error"));
    }
    if (void* f = ::dlsym(handle, kFactory)) return reinterpret_cast<Factory>(f);
    throw std::runtime_error(path + " is not the simgrid network model's plugin (no " +
                             std::string(kFactory) + ")");
  }
  throw std::runtime_error(std::string("the simgrid network model's plugin ") + kPlugin +
                           " was not found (looked at " + tried +
                           "; set CLUSTERSIM_SIMGRID_PLUGIN to its path)");
}

}  // namespace

std::unique_ptr<NetworkModel> make_simgrid_model(const Topology& topology,
                                                 const CollectiveProfile* profile,
                                                 const NetworkOptions& options) {
  static std::mutex mutex;
  static Factory factory = nullptr;
  {
    const std::lock_guard lock(mutex);
    if (factory == nullptr) factory = open_plugin();
  }
  return std::unique_ptr<NetworkModel>(factory(topology, profile, options));
}

}  // namespace clustersim::engine::detail
