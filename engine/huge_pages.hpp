#pragma once

#include <cstddef>
#include <vector>

namespace clustersim::engine {

// Asks the kernel to back [data, data + bytes) with transparent huge pages (2 MiB), where it
// offers them on request (Linux, THP "madvise" or "always"); elsewhere it does nothing. Called
// before the memory is first touched, it turns the 512 page faults of each 2 MiB of a large
// array into one, and the page walks of random reads into fewer: on a VM that pays several
// microseconds a fault, filling the simulator's per-op arrays was a quarter of a large run's time
// (docs/performance.md, "Huge pages under large allocations"). Only the whole 2 MiB pages inside
// the range are advised; small ranges are left alone.
void advise_huge_pages(const void* data, std::size_t bytes);

// Reserves room for `n` elements and advises huge pages under it, before the caller fills it
// (resize, assign or push_back up to `n`, which then do not reallocate).
template <typename T, typename A>
void reserve_huge(std::vector<T, A>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace clustersim::engine
