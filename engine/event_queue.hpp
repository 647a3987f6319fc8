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
    heap_.emplace_back();
    sift_up(heap_.size() - 1, {time, next_sequence_++, payload});
  }
  const Event& top() const { return heap_.front(); }
  // Always inlined: the simulator's loop pops millions of times (through OpEndQueue), and a
  // second call site (its rare stale-event path) must not move the loop's pop out of line.
  [[gnu::always_inline]] Event pop() {
    const Event e = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
    return e;
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
    if (heap_.size() < 2) return;
    for (std::size_t i = (heap_.size() - 2) / kArity + 1; i-- > 0;)  // from the last parent up
      sift_down(i, heap_[i]);
  }

 private:
  // Four children a node: half the levels of a binary heap, a node's children side by side (96
  // bytes). The binary heap's sift-down was about half of `simulate`'s own samples on GPT-3 175B
  // (~860 events queued; ~16,000 at 16,384 GPUs); bench/bench_event_queue.cpp measures both
  // sizes. Every event's (time, sequence) is distinct, so the pop order is the same whatever
  // the arity, and so is every result.
  static constexpr std::size_t kArity = 4;

  static bool later(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
  void sift_up(std::size_t i, const Event e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!later(heap_[parent], e)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Puts `e` at `i` or below, moving the earliest child up while it is earlier than `e`.
  void sift_down(std::size_t i, const Event e) {  // by value: it may be heap_[i]
    const std::size_t n = heap_.size();
    while (true) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t end = std::min(first + kArity, n);
      std::size_t earliest = first;
      for (std::size_t c = first + 1; c < end; ++c)
        if (later(heap_[earliest], heap_[c])) earliest = c;
      if (!later(e, heap_[earliest])) break;
      heap_[i] = heap_[earliest];
      i = earliest;
    }
    heap_[i] = e;
  }
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace clustersim::engine
