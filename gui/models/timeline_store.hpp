// What the timeline view draws: one lane per (rank, stream), each a flat array of the lane's ops
// sorted by start time. The view asks only for what a frame shows: the ops overlapping the visible
// time range (binary search) and, when zoomed out, runs of ops inside one pixel column merged into
// one span, so a frame costs about one span per pixel column however many ops the run has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "gui/models/time_axis.hpp"

namespace clustersim::gui {

struct LaneItem {
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
  engine::OpId op = 0;
};

struct Lane {
  engine::Rank rank = 0;
  engine::StreamId stream = 0;
  std::vector<LaneItem> items;  // sorted by start
  // Running maximum of end_ps, kept only when ends are not already sorted (a lane whose ops
  // overlap); the visible-range search needs a monotone key.
  std::vector<std::int64_t> reach_ps;
};

// Ops drawn as one rectangle: a single op, or consecutive ops that all lie inside one pixel
// column (`count` of them; `op` is the longest, which gives the colour and the tooltip).
struct Span {
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
  engine::OpId op = 0;
  std::uint32_t count = 1;
};

// Consecutive lanes drawn as one row: one lane, or a rank's streams folded together (lanes are in
// rank-then-stream order, so a rank's lanes are consecutive). A folded row is a merged view over
// its lanes' sorted items: nothing is copied but what a frame shows.
struct LaneRange {
  std::size_t first = 0;
  std::size_t count = 1;
};

class TimelineStore {
 public:
  TimelineStore() = default;
  // Lanes ordered by rank, then stream; ops that never ran (end before start) are left out.
  static TimelineStore build(const engine::Schedule& schedule, const engine::Timeline& timeline);

  std::size_t lane_count() const { return lanes_.size(); }
  const Lane& lane(std::size_t index) const { return lanes_[index]; }
  std::size_t item_count() const { return item_count_; }
  std::int64_t makespan_ps() const { return makespan_ps_; }
  std::optional<std::size_t> lane_of(engine::Rank rank, engine::StreamId stream) const;

  // The lanes of `rank` (count 0 when it has none).
  LaneRange rank_lanes(engine::Rank rank) const;

  // [first, last): the lane's items overlapping [from_ps, to_ps). On a lane whose ops overlap
  // (rare: a stream runs its ops in order) it may also hold short ones in between that do not.
  std::pair<std::size_t, std::size_t> visible(std::size_t lane, std::int64_t from_ps,
                                              std::int64_t to_ps) const;
  // The items of `lanes` in their visible ranges, merged by start (ties: lane order).
  std::vector<LaneItem> visible_items(LaneRange lanes, std::int64_t from_ps,
                                      std::int64_t to_ps) const;
  // What to paint for the lanes over pixels [0, width_pixels) of `axis`, as one row.
  std::vector<Span> spans(LaneRange lanes, const TimeAxis& axis, double width_pixels) const;
  std::vector<Span> spans(std::size_t lane, const TimeAxis& axis, double width_pixels) const {
    return spans(LaneRange{lane, 1}, axis, width_pixels);
  }
  // The op under `time_ps`, or the nearest within `slack_ps` (a pixel's worth when hovering);
  // where ops overlap, the one painted on top (the latest to start).
  std::optional<engine::OpId> op_at(LaneRange lanes, std::int64_t time_ps,
                                    std::int64_t slack_ps) const;
  std::optional<engine::OpId> op_at(std::size_t lane, std::int64_t time_ps,
                                    std::int64_t slack_ps) const {
    return op_at(LaneRange{lane, 1}, time_ps, slack_ps);
  }

 private:
  std::vector<Lane> lanes_;
  std::size_t item_count_ = 0;
  std::int64_t makespan_ps_ = 0;
};

}  // namespace clustersim::gui
