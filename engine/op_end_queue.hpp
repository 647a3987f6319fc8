// The GPU ops' ends the simulator waits for (engine/simulator.cpp), popped in EventQueue's order
// (by time, ties in push order), with the ends pushed one right after another at one instant held
// as one queue entry. When a tensor-parallel collective ends, its eight members start their next
// ops together, and those end together: one heap entry where there were eight, and one sift
// each way instead of eight (GPT-3 175B's simulation 28 % faster;
// docs/performance-largest-runs-4dec.md).
//
// The order is EventQueue's exactly: ends pushed one after another got consecutive sequence
// numbers there, so no other event could come between them; here they share the sequence number
// of their entry, taken when the next push of another instant (or a read of the queue) closes
// the run, and are popped one by one, in the order pushed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/op.hpp"
#include "engine/slot_pool.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class OpEndQueue {
 public:
  struct End {
    OpId op;
    std::uint32_t stream;  // below 2^31 (the simulator has at most 2^24 streams)
  };

  void push(Time time, End end) {
    if (!run_.empty() && time == run_time_) {
      run_.push_back(end);
      return;
    }
    close_run();
    run_time_ = time;
    run_.push_back(end);
  }
  bool empty() {
    close_run();
    return queue_.empty();
  }
  Time next_time() {
    close_run();
    return queue_.next_time();
  }
  // The earliest end and its time (the queue is not empty).
  End front() {
    close_run();
    const Entry e = queue_.top().payload;
    if (!(e.second & kGroup)) return {e.first, e.second};
    const Group& g = groups_[e.first];
    return g.ends[g.next];
  }
  Time front_time() {
    close_run();
    return queue_.top().time;
  }
  // Entries in the queue's heap, the run being pushed counted as one: what grouping saves.
  std::size_t entries() const { return queue_.size() + (run_.empty() ? 0 : 1); }
  void pop_front() {
    close_run();
    const Entry e = queue_.top().payload;
    if (e.second & kGroup) {
      Group& g = groups_[e.first];
      if (++g.next < g.ends.size()) return;
      g.ends.clear();
      g.next = 0;
      free_.push_back(e.first);
    }
    queue_.pop();
  }

 private:
  // (op, stream) for one end; (group index, kGroup) for several.
  struct Entry {
    std::uint32_t first;
    std::uint32_t second;
  };
  struct Group {
    std::vector<End> ends;
    std::uint32_t next = 0;  // the first end not yet popped
  };
  static constexpr std::uint32_t kGroup = 0x80000000u;

  // The ends pushed at run_time_ since the last push of another instant become one entry.
  void close_run() {
    if (run_.empty()) return;
    if (run_.size() == 1) {
      queue_.push(run_time_, {run_[0].op, run_[0].stream});
    } else {
      const std::uint32_t g = pool_alloc(groups_, free_);
      groups_[g].ends.swap(run_);  // run_ takes the group's emptied list and its capacity
      queue_.push(run_time_, {g, kGroup});
    }
    run_.clear();
  }

  EventQueue<Entry> queue_;
  std::vector<End> run_;  // pushed at run_time_, one after another, not yet in queue_
  Time run_time_;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_;  // groups_ slots not in use
};

}  // namespace clustersim::engine
