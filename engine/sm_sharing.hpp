// Compute that shares its GPU's SMs with communication kernels (docs/architecture.md "Compute
// shares the SMs with communication"; the cost model: docs/fidelity.md).
//
// NCCL runs a collective as one CTA per channel, each resident on an SM from the moment the
// collective moves data until it ends; a compute kernel that overlaps it gets the other SMs (the
// CUDA block scheduler does not preempt). So a GEMM overlapped with an 8-channel all-gather on a
// 108-SM A100 runs its waves on 100 SMs, and one sized for exactly one wave needs two. This
// class keeps, per GPU, the SMs its in-flight collectives hold, and runs each compute op at the
// pace its kernel list has with that many SMs held (ComputeModel::kernel_list_durations_sharing):
// an op keeps the share of its work not yet done, and its end moves whenever the count changes.
// Ops costed without a kernel list (ComputeModel::duration) and device copies keep their pace.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "engine/compute_model.hpp"
#include "engine/schedule.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

class SmSharing {
 public:
  // `lists`: how many leading entries of the run's duration table are kernel lists of `table`
  // (the rest are ops' own durations). Disabled when the model does not cost SM sharing.
  SmSharing(const ComputeModel& compute, const KernelTable& table, std::size_t lists,
            std::size_t ranks, std::size_t streams_per_rank);

  bool enabled() const { return enabled_; }

  // GPU op `id` (duration-table entry `work`, `base` long with every SM free) starts on stream
  // `stream` of `rank` at `now`: its end at the rank's current pace.
  Time start(std::uint32_t rank, std::uint32_t stream, OpId id, std::uint32_t work, Time base,
             Time now) {
    if (!enabled_) return now + base;
    Running& r = running_[stream];
    r.start = now;
    r.since = now;
    r.base = base;
    r.duration = held_[rank] == 0 ? base : duration(work, held_[rank], base);
    r.left = 1.0;
    r.end = now + r.duration;
    r.op = id;
    r.work = work;
    r.moved = r.duration != base;
    ++gpu_running_[rank];
    return r.end;
  }

  // Whether (id, t) is the end currently scheduled for the op running on `stream` (an end moved
  // by change() leaves its old event in the queue, to be dropped when it comes up).
  bool current(std::uint32_t stream, OpId id, Time t) const {
    const Running& r = running_[stream];
    return r.op == id && r.end == t;
  }

  // The op on `stream` ended at `now`.
  void finish(std::uint32_t stream, std::uint32_t rank, Time now) {
    if (!enabled_) return;
    Running& r = running_[stream];
    if (r.moved) {
      moved_starts_.emplace_back(r.op, r.start);
      delay_[rank] += (now - r.start) - r.base;
    }
    r.op = kNone;
    --gpu_running_[rank];
  }

  // Communication on `rank` now holds `delta` more SMs (fewer when negative). Every GPU op
  // running on the rank whose end moves is reported as moved(stream, op, new end).
  template <class Moved>
  void change(std::uint32_t rank, int delta, Time now, Moved moved) {
    held_[rank] = static_cast<std::uint32_t>(static_cast<std::int64_t>(held_[rank]) + delta);
    if (gpu_running_[rank] == 0) return;
    for (std::size_t s = rank * streams_per_rank_, e = s + streams_per_rank_; s < e; ++s) {
      Running& r = running_[s];
      if (r.op == kNone || r.work >= lists_) continue;
      const Time end = repace(r, held_[rank], now);
      if (end != r.end) {
        r.end = end;
        r.moved = true;
        moved(static_cast<std::uint32_t>(s), r.op, end);
      }
    }
  }

  // The ops whose end is not start + their full-GPU duration, with their start (the simulator
  // keeps only each op's end and derives the start of the others from it), one entry per op, in
  // the order they ended: sorting them by OpId cost 2.5 % of the 16,384-GPU run.
  std::vector<std::pair<OpId, Time>> take_moved_starts();
  // Per rank: how much longer its compute ran than on the whole GPU (empty when disabled).
  std::vector<Time> take_delays() { return std::move(delay_); }

 private:
  struct Running {
    Time start;
    Time since;         // when `left` was last brought up to date
    Time end;           // the end the event queue holds
    Time duration;      // the whole op's duration at the current pace
    Time base;          // ... with every SM free
    double left = 0.0;  // share of the op's work not done at `since`
    OpId op = kNone;    // kNone: the stream runs no GPU op
    std::uint32_t work = 0;
    bool moved = false;  // ran at another pace than the full GPU's at some point
  };

  // Duration of kernel list `work` with `held` SMs held.
  Time duration(std::uint32_t work, std::uint32_t held, Time base);
  Time repace(Running& r, std::uint32_t held, Time now);

  const ComputeModel& compute_;
  const KernelTable& table_;
  std::size_t lists_ = 0;
  std::size_t streams_per_rank_ = 1;
  bool enabled_ = false;
  std::vector<std::uint32_t> held_;                     // per rank: SMs its communication holds
  std::vector<std::uint8_t> gpu_running_;               // per rank: GPU ops running (a few streams)
  std::vector<Running> running_;                        // per stream
  std::map<std::uint32_t, std::vector<Time>> by_held_;  // kernel-list durations per held count
  std::vector<std::pair<OpId, Time>> moved_starts_;
  std::vector<Time> delay_;  // per rank
};

}  // namespace clustersim::engine
