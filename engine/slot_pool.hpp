// Slots of a vector reused through a free list: the network models' transfers, flows and batches,
// the simulator's groups of op ends (engine/op_end_queue.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace clustersim::engine {

// A slot of `pool`: the last freed one, or a new one at the end.
template <class T>
std::uint32_t pool_alloc(std::vector<T>& pool, std::vector<std::uint32_t>& free) {
  if (!free.empty()) {
    const std::uint32_t i = free.back();
    free.pop_back();
    return i;
  }
  pool.emplace_back();
  return static_cast<std::uint32_t>(pool.size() - 1);
}

}  // namespace clustersim::engine
