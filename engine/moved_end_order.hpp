// The key (time, sequence number) that a GPU op's moved end takes in the simulator's indexed
// event queue, so that events pop in exactly the order they did when a moved end was pushed anew.
//
// Then (before 2 Dec 2026, night), SM sharing moving an op's end pushed a new event with a fresh
// sequence number and left the earlier ones queued; at the top of each loop iteration, queued
// events that were not an op's current end (same op, same time) were dropped from the queue's top.
// So an op whose end moved back to an earlier end's time ended at that earlier event, with its
// older sequence number, if that event was still queued: not dropped, that is at no loop top
// since its push was every live event later than it. This class keeps, per slot, the keys pushed
// for its op, and, while any slot has some, each loop top's earliest live key (a stack of the
// suffix maxima), which says whether a key was dropped.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "engine/indexed_event_queue.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class MovedEndOrder {
 public:
  explicit MovedEndOrder(std::size_t slots = 0) : pushed_(slots) {}

  // Whether some slot's op has moved (and finished() must be told when it ends).
  bool any() const { return listed_ > 0; }

  // The top of a loop iteration: `first` is the queue's earliest key (the latest possible when it
  // is empty), `next_sequence` the sequence number the next push would take.
  // Needed only while any(): the loop tops before do not matter (see dropped()).
  void at_loop_top(EventKey first, std::uint64_t next_sequence) {
    if (!tops_.empty() && tops_.back().first == first) {  // the same top: it covers more keys
      tops_.back().second = next_sequence;
      return;
    }
    while (!tops_.empty() && !(first < tops_.back().first))
      tops_.pop_back();  // a later loop top with a later earliest key covers it
    tops_.push_back({first, next_sequence});
  }

  // The op queued at `current` on `slot` now ends at fresh.time, where the former scheme pushed
  // `fresh` (a new sequence number) at `now`: its key, the earliest of its pushes at that time
  // still queued there.
  EventKey moved(std::uint32_t slot, EventKey current, EventKey fresh, Time now) {
    std::vector<EventKey>& keys = pushed_[slot];
    if (keys.empty()) {
      keys.push_back(current);  // its first push (live since: never dropped)
      ++listed_;
    }
    // An end is never before now: earlier keys cannot match again.
    std::erase_if(keys, [&](const EventKey& k) { return k.time < now; });
    EventKey best = fresh;
    for (const EventKey& k : keys)
      if (k.time == fresh.time && k < best && !dropped(k)) best = k;
    keys.push_back(fresh);
    return best;
  }

  // The op on `slot` ended: its keys no longer matter.
  void finished(std::uint32_t slot) {
    if (pushed_[slot].empty()) return;
    pushed_[slot].clear();
    if (--listed_ == 0) tops_.clear();  // no key left to ask about
  }

  static EventKey none() { return {Time::max(), std::numeric_limits<std::uint64_t>::max()}; }

 private:
  // Whether `k`'s event would have been dropped: some loop top after its push had every live
  // event later than it. The first recorded loop top after the push holds the latest earliest key
  // of all of them (loop tops when no slot had keys had `k`'s op live, hence no later earliest
  // key).
  bool dropped(const EventKey& k) const {
    const auto it =
        std::upper_bound(tops_.begin(), tops_.end(), k.sequence,
                         [](std::uint64_t s, const auto& top) { return s < top.second; });
    return it != tops_.end() && k < it->first;
  }

  std::vector<std::vector<EventKey>> pushed_;  // per slot: keys pushed for its op, once it moved
  std::size_t listed_ = 0;                     // slots with keys
  // Loop tops (earliest live key, next sequence number then), the keys decreasing.
  std::vector<std::pair<EventKey, std::uint64_t>> tops_;
};

}  // namespace clustersim::engine
