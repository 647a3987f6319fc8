// Internal to engine/network: the concrete models behind make_network_model() and the pieces
// they share. Not part of the engine's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/network/network_model.hpp"

namespace clustersim::engine::detail {

std::unique_ptr<NetworkModel> make_ideal_model(const Topology& topology);
std::unique_ptr<NetworkModel> make_analytical_model(const Topology& topology,
                                                    const CollectiveProfile* profile);
std::unique_ptr<NetworkModel> make_flow_model(const Topology& topology,
                                              const CollectiveProfile* profile);

// Adds every flow's bytes of `plan` scaled by `payload_bytes` to the links of its route.
void add_plan_link_bytes(const Topology& topology, const TransferPlan& plan, double payload_bytes,
                         std::vector<double>& link_bytes);

// A min-heap of timed events over one reused vector; equal times pop in insertion order, so a
// run never depends on the heap's internal layout.
template <class T>
class EventQueue {
 public:
  void push(Time t, const T& payload) {
    items_.push_back({t, seq_++, payload});
    std::push_heap(items_.begin(), items_.end(), later);
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  Time top_time() const { return items_.front().t; }
  const T& top() const { return items_.front().payload; }
  T pop() {
    std::pop_heap(items_.begin(), items_.end(), later);
    T payload = items_.back().payload;
    items_.pop_back();
    return payload;
  }
  // Drops the events `keep` rejects (lazily invalidated ones) and restores the heap.
  template <class Keep>
  void compact(Keep keep) {
    std::erase_if(items_, [&](const Item& i) { return !keep(i.payload); });
    std::make_heap(items_.begin(), items_.end(), later);
  }

 private:
  struct Item {
    Time t;
    std::uint64_t seq;
    T payload;
  };
  static bool later(const Item& a, const Item& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  std::vector<Item> items_;
  std::uint64_t seq_ = 0;
};

}  // namespace clustersim::engine::detail
