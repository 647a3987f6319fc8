#include "engine/io/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace clustersim::engine {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(path + ": directory '" + dir.string() + "' does not exist");
  const fs::path tmp =
      dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    out.close();
    fs::rename(tmp, target);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace clustersim::engine
