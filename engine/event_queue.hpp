// A min-heap of timed events with deterministic tie-breaking: events at the same time pop in the
// order they were pushed. Storage is one vector, so pushing never allocates once it has grown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/units.hpp"

namespace clustersim::engine {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    Time time;
    std::uint64_t sequence;
    Payload payload;
  };

  void push(Time time, Payload payload) {
    heap_.push_back({time, next_sequence_++, payload});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  const Event& top() const { return heap_.front(); }
  // Always inlined: the simulator's loop pops millions of times, and a second call site (its
  // rare stale-event path) must not make the compiler move the loop's pop out of line.
  [[gnu::always_inline]] Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  // Pops the top and pushes (time, payload) in one sift-down: the same heap contents, hence the
  // same pop order, as pop() followed by push(), at about half the cost.
  void replace_top(Time time, Payload payload) {
    const Event e{time, next_sequence_++, payload};
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    while (true) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && later(heap_[c], heap_[c + 1])) ++c;  // the earlier child
      if (!later(e, heap_[c])) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = e;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  Time next_time() const { return heap_.empty() ? Time::max() : heap_.front().time; }
  // Drops the events `keep` rejects (lazily invalidated ones) and restores the heap; the
  // sequence numbers keep the pop order of the rest.
  template <class Keep>
  void compact(Keep keep) {
    std::erase_if(heap_, [&](const Event& e) { return !keep(e.payload); });
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }

 private:
  static bool later(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
  // A function object, not the function's address: the heap algorithms then inline the
  // comparison (as a pointer they called it: 8 % of the GPT-3 run).
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return later(a, b); }
  };
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace clustersim::engine
