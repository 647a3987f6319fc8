// A min-heap of timed events, at most one per slot (the simulator's slots are its streams), that
// knows where each slot's event sits: a queued event's time can move in place (a sift up or down)
// instead of being pushed again. Ties break as in EventQueue: by a sequence number that every
// push takes from a counter, so events at the same time pop in push order; reschedule() sets a
// key (time, sequence) the caller chose, fresh from take_sequence() or an earlier one.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/units.hpp"

namespace clustersim::engine {

// An event's place in the pop order: by time, then by sequence number.
struct EventKey {
  Time time;
  std::uint64_t sequence;
  bool operator<(const EventKey& o) const {
    return time != o.time ? time < o.time : sequence < o.sequence;
  }
  bool operator==(const EventKey&) const = default;
};

template <typename Payload>
class IndexedEventQueue {
 public:
  struct Event {
    Time time;
    std::uint64_t sequence;
    Payload payload;
    std::uint32_t slot;
  };

  explicit IndexedEventQueue(std::size_t slots = 0) : pos_(slots, 0) {}

  // `slot` must have no event queued.
  void push(std::uint32_t slot, Time time, Payload payload) {
    heap_.push_back({time, next_sequence_++, payload, slot});
    sift_up(heap_.size() - 1, heap_.back());
  }
  const Event& top() const { return heap_.front(); }
  [[gnu::always_inline]] Event pop() {
    const Event e = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) refill_top(last);
    return e;
  }
  // Pops the top and pushes (slot, time, payload) in one pass: the same pop order as pop()
  // followed by push().
  void replace_top(std::uint32_t slot, Time time, Payload payload) {
    refill_top({time, next_sequence_++, payload, slot});
  }
  // The key of the event queued for `slot` (one must be).
  EventKey key(std::uint32_t slot) const {
    const Event& e = heap_[pos_[slot]];
    return {e.time, e.sequence};
  }
  // A sequence number as push() would take it, for reschedule().
  std::uint64_t take_sequence() { return next_sequence_++; }
  std::uint64_t next_sequence() const { return next_sequence_; }
  // The event queued for `slot` now has key `k`: it sifts up or down from where it is.
  void reschedule(std::uint32_t slot, EventKey k) {
    const std::size_t i = pos_[slot];
    Event e = heap_[i];
    e.time = k.time;
    e.sequence = k.sequence;
    if (i > 0 && later(heap_[(i - 1) / 2], e))
      sift_up(i, e);
    else
      sift_down(i, e);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  Time next_time() const { return heap_.empty() ? Time::max() : heap_.front().time; }

 private:
  static bool later(const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
  // Moves `e` from hole i towards the root while its parent is later.
  void sift_up(std::size_t i, const Event e) {
    while (i > 0) {
      const std::size_t p = (i - 1) / 2;
      if (!later(heap_[p], e)) break;
      place(i, heap_[p]);
      i = p;
    }
    place(i, e);
  }
  // Moves `e` from hole i towards the leaves while a child is earlier.
  void sift_down(std::size_t i, const Event e) {
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && later(heap_[c], heap_[c + 1])) ++c;  // the earlier child
      if (!later(e, heap_[c])) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, e);
  }
  // The top's place is free and `e` must go somewhere: as std::pop_heap does (Floyd), the hole
  // goes down to a leaf along the earlier children (one comparison a level), then `e` sifts up
  // from there (rarely far: a late event belongs near the leaves).
  void refill_top(const Event e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    while (true) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && later(heap_[c], heap_[c + 1])) ++c;
      place(i, heap_[c]);
      i = c;
    }
    sift_up(i, e);
  }
  void place(std::size_t i, const Event& e) {
    heap_[i] = e;
    pos_[e.slot] = static_cast<std::uint32_t>(i);
  }

  std::vector<Event> heap_;
  std::vector<std::uint32_t> pos_;  // per slot: its event's index in heap_ while one is queued
  std::uint64_t next_sequence_ = 0;
};

}  // namespace clustersim::engine
