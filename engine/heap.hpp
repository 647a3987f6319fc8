// Handing memory back while a run goes on: the simulator frees its construction-time tables
// before the loop and the loop's lists before it fills the timeline, so the peak holds one of
// them at a time (docs/performance-largest-runs.md).
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <vector>

namespace clustersim::engine {

// Frees a vector's memory; `v = {}` would not (it assigns an empty list and keeps the capacity).
template <class T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// Hands the heap's free pages back: glibc keeps freed blocks under its mmap threshold (32 MB once
// large vectors have come and gone) resident, so the loop's few-MB lists would stay in the peak.
inline void trim_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace clustersim::engine
