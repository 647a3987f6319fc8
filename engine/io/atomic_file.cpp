#include "engine/io/atomic_file.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace clustersim::engine {

namespace {

// Temporary files being written, for the signal handler: fixed slots of plain characters, since a
// handler may only read memory and call async-signal-safe functions (unlink, _exit).
constexpr std::size_t kSlots = 8;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> ready{false};
  char path[kPathMax];
};
std::array<Slot, kSlots> g_temporaries;

// Registers `path` for the lifetime of the object (a temporary too long or too many is simply not
// registered: the handler is a best effort, writing does not depend on it).
class Registered {
 public:
  explicit Registered(const std::string& path) {
    if (path.size() >= kPathMax) return;
    for (Slot& s : g_temporaries) {
      bool expected = false;
      if (!s.used.compare_exchange_strong(expected, true)) continue;
      std::memcpy(s.path, path.c_str(), path.size() + 1);
      s.ready.store(true);
      slot_ = &s;
      return;
    }
  }
  ~Registered() {
    if (slot_ == nullptr) return;
    slot_->ready.store(false);
    slot_->used.store(false);
  }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 private:
  Slot* slot_ = nullptr;
};

extern "C" void remove_temporaries_and_exit(int sig) {
  for (Slot& s : g_temporaries)
    if (s.ready.load()) ::unlink(s.path);
  ::_exit(128 + sig);
}

}  // namespace

bool names_a_descriptor(const std::string& path) {
  return path.starts_with("/dev/") || path.starts_with("/proc/");
}

void install_interrupt_cleanup() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_exit;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &action, nullptr);
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (names_a_descriptor(path)) {
    // /dev/stdout redirected to a file resolves to that file: renaming over it would drop what
    // was printed before (the summary); appending keeps it, and a pipe or terminal is unaffected.
    std::ofstream out(path, std::ios::binary | std::ios::app);
    if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    return;
  }
  fs::path target(path);
  // A link stays a link: the file it points to is replaced, or created when the link dangles
  // (weakly_canonical would stop at a dangling link and rename over the link itself). Chains
  // are followed as far as the kernel's own limit of 40 links.
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path to = fs::read_symlink(target, ec);
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
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
  const Registered registered(tmp.string());
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    out.close();
    if (!out) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    fs::rename(tmp, target);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace clustersim::engine
