// The global operator new of the programs that link this file (clustersim, clustersim-gui,
// clustersim-sweep-mpi, the benchmarks): malloc, as the default one, and for an allocation of
// 4 MiB or more a request for transparent huge pages before its first touch
// (engine/huge_pages.hpp). A large run's memory is a few dozen arrays of tens or hundreds of MB
// (per-op records, loop words, the timeline, the matching's lists), filled once and read at
// random: each 4 KiB page faulted and zeroed on its own cost a quarter of the run's time on this
// project's VMs, and the page walks of random reads another part (docs/performance.md, "Huge
// pages under large allocations"). A replacement of the allocation functions is standard C++
// ([replacement.functions]); libraries (the engine, the Python module) do not carry it, and
// sanitizer builds keep their own (engine/CMakeLists.txt).
#include <cstdlib>
#include <new>

#include "engine/huge_pages.hpp"

namespace {

constexpr std::size_t kLarge = std::size_t{4} << 20;

void* allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  while (true) {
    if (void* p = std::malloc(bytes)) {
      if (bytes >= kLarge) clustersim::engine::advise_huge_pages(p, bytes);
      return p;
    }
    // As the default operator new: the new-handler may free memory and let it try again.
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t bytes) {
  return allocate(bytes);
}
void* operator new[](std::size_t bytes) {
  return allocate(bytes);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
