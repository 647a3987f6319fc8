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
  std::error_code ec;
  fs::path target(path);
  // A link stays a link: the file it points to is replaced.
  if (fs::is_symlink(target, ec)) target = fs::weakly_canonical(target, ec);
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status)) throw std::runtime_error(path + ": is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or a pipe (/dev/null, /dev/stdout, a FIFO): write into it; renaming over it would
    // replace the special file itself (users run as root).
    std::ofstream out(target, std::ios::binary);
    if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
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
