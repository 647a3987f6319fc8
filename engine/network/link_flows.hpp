// Internal to the flow model (flow_model.cpp): what it keeps per link, in one 32-byte record.
// Every flow start and end touches its route's links; with the flow list, the component search's
// mark and the dirty flag in separate arrays (the list's elements on the heap), each link touched
// was four cache misses, a third of the flow model's time at 16,384 GPUs. Most links carry at
// most four flows at once (a ring inside a node, a pipeline send), which stay inline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

namespace clustersim::engine::detail {

class LinkFlows {
 public:
  LinkFlows() = default;
  LinkFlows(const LinkFlows&) = delete;  // kept in place: a vector of them is sized once
  LinkFlows& operator=(const LinkFlows&) = delete;
  ~LinkFlows() {
    if (heap()) delete[] data_.heap;
  }

  // The link's active flows, in the order a std::vector with push_back and swap-remove
  // (pop_back after moving the last one into the gap) would hold them.
  std::uint32_t size() const { return size_; }
  const std::uint32_t* begin() const { return heap() ? data_.heap : data_.local; }
  const std::uint32_t* end() const { return begin() + size_; }
  std::uint32_t operator[](std::uint32_t i) const { return begin()[i]; }
  std::uint32_t back() const { return begin()[size_ - 1]; }
  void set(std::uint32_t i, std::uint32_t flow) { elements()[i] = flow; }
  void push_back(std::uint32_t flow) {
    if (size_ == capacity_) grow();
    elements()[size_++] = flow;
  }
  void pop_back() { --size_; }

  // The flow model's per-link mark, beside the list so that a link's visit reads one record:
  // the epoch of the last component search that reached the link (the next search's, once its
  // flow set changed).
  std::uint32_t seen = 0;

 private:
  static constexpr std::uint32_t kLocal = 4;
  bool heap() const { return capacity_ > kLocal; }
  std::uint32_t* elements() { return heap() ? data_.heap : data_.local; }
  void grow() {
    const std::uint32_t capacity = capacity_ * 2;
    auto bigger = std::make_unique<std::uint32_t[]>(capacity);
    std::copy(begin(), end(), bigger.get());
    if (heap()) delete[] data_.heap;
    data_.heap = bigger.release();
    capacity_ = capacity;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kLocal;
  union {
    std::uint32_t local[kLocal];
    std::uint32_t* heap;
  } data_ = {};
};
static_assert(sizeof(LinkFlows) == 32);

}  // namespace clustersim::engine::detail
