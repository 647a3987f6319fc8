#include "gui/models/timeline_store.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace clustersim::gui {

TimelineStore TimelineStore::build(const engine::Schedule& schedule,
                                   const engine::Timeline& timeline) {
  TimelineStore store;
  // Lane index per (rank, stream), in rank-then-stream order.
  std::map<std::pair<engine::Rank, engine::StreamId>, std::size_t> index;
  for (const auto& op : schedule.ops)
    index.emplace(std::pair{op.rank, op.stream}, 0);
  store.lanes_.resize(index.size());
  std::size_t next = 0;
  for (auto& [key, lane] : index) {
    store.lanes_[next].rank = key.first;
    store.lanes_[next].stream = key.second;
    lane = next++;
  }
  std::vector<std::size_t> sizes(store.lanes_.size(), 0);
  std::vector<std::size_t> lane_of_op(schedule.ops.size());
  const engine::OpStore::Reader in_order = schedule.ops.reader();
  for (engine::OpId id = 0; id < schedule.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    lane_of_op[id] = index.at({op.rank, op.stream});
    ++sizes[lane_of_op[id]];
  }
  for (std::size_t l = 0; l < sizes.size(); ++l)
    store.lanes_[l].items.reserve(sizes[l]);
  for (engine::OpId id = 0; id < schedule.ops.size(); ++id) {
    const std::int64_t start = timeline.start[id].ps();
    const std::int64_t end = timeline.end[id].ps();
    if (end < start) continue;
    store.lanes_[lane_of_op[id]].items.push_back({start, end, id});
    store.makespan_ps_ = std::max(store.makespan_ps_, end);
    ++store.item_count_;
  }
  for (Lane& lane : store.lanes_) {
    std::stable_sort(lane.items.begin(), lane.items.end(),
                     [](const LaneItem& a, const LaneItem& b) { return a.start_ps < b.start_ps; });
    const bool ends_sorted =
        std::is_sorted(lane.items.begin(), lane.items.end(),
                       [](const LaneItem& a, const LaneItem& b) { return a.end_ps < b.end_ps; });
    if (ends_sorted) continue;
    lane.reach_ps.resize(lane.items.size());
    std::int64_t reach = 0;
    for (std::size_t i = 0; i < lane.items.size(); ++i)
      lane.reach_ps[i] = reach = std::max(reach, lane.items[i].end_ps);
  }
  return store;
}

std::optional<std::size_t> TimelineStore::lane_of(engine::Rank rank,
                                                  engine::StreamId stream) const {
  const auto it =
      std::lower_bound(lanes_.begin(), lanes_.end(), std::pair{rank, stream},
                       [](const Lane& lane, const std::pair<engine::Rank, engine::StreamId>& key) {
                         return std::pair{lane.rank, lane.stream} < key;
                       });
  if (it == lanes_.end() || it->rank != rank || it->stream != stream) return std::nullopt;
  return static_cast<std::size_t>(it - lanes_.begin());
}

std::pair<std::size_t, std::size_t> TimelineStore::visible(std::size_t lane_index,
                                                           std::int64_t from_ps,
                                                           std::int64_t to_ps) const {
  const Lane& lane = lanes_[lane_index];
  const auto& items = lane.items;
  // First item that ends after from_ps: ends (or their running maximum) are monotone.
  std::size_t first = 0;
  if (lane.reach_ps.empty()) {
    first = static_cast<std::size_t>(
        std::partition_point(items.begin(), items.end(),
                             [&](const LaneItem& item) { return item.end_ps <= from_ps; }) -
        items.begin());
  } else {
    first = static_cast<std::size_t>(
        std::partition_point(lane.reach_ps.begin(), lane.reach_ps.end(),
                             [&](std::int64_t reach) { return reach <= from_ps; }) -
        lane.reach_ps.begin());
  }
  // One past the last item that starts before to_ps.
  const std::size_t last = static_cast<std::size_t>(
      std::partition_point(items.begin() + static_cast<std::ptrdiff_t>(first), items.end(),
                           [&](const LaneItem& item) { return item.start_ps < to_ps; }) -
      items.begin());
  return {first, std::max(first, last)};
}

LaneRange TimelineStore::rank_lanes(engine::Rank rank) const {
  const auto below = [](const Lane& lane, engine::Rank r) { return lane.rank < r; };
  const auto first = std::lower_bound(lanes_.begin(), lanes_.end(), rank, below);
  const auto last = std::lower_bound(first, lanes_.end(), rank + 1, below);
  return {static_cast<std::size_t>(first - lanes_.begin()), static_cast<std::size_t>(last - first)};
}

namespace {

// The visible items of a row's lanes in start order: a k-way merge over each lane's visible
// range (k is a rank's stream count, a handful), so a folded row costs what its lanes do.
class MergedItems {
 public:
  MergedItems(const TimelineStore& store, LaneRange lanes, std::int64_t from_ps,
              std::int64_t to_ps) {
    for (std::size_t l = lanes.first; l < lanes.first + lanes.count; ++l) {
      const auto [first, last] = store.visible(l, from_ps, to_ps);
      if (first < last) parts_.push_back({&store.lane(l).items[first], &store.lane(l).items[last]});
    }
  }
  // The next item by start, the earlier lane first on a tie; nullptr after the last.
  const LaneItem* next() {
    Part* best = nullptr;
    for (Part& part : parts_)
      if (part.at != part.end && (!best || part.at->start_ps < best->at->start_ps)) best = &part;
    return best ? best->at++ : nullptr;
  }

 private:
  struct Part {
    const LaneItem* at;
    const LaneItem* end;
  };
  std::vector<Part> parts_;
};

}  // namespace

std::vector<LaneItem> TimelineStore::visible_items(LaneRange lanes, std::int64_t from_ps,
                                                   std::int64_t to_ps) const {
  MergedItems merged(*this, lanes, from_ps, to_ps);
  std::vector<LaneItem> out;
  while (const LaneItem* item = merged.next())
    out.push_back(*item);
  return out;
}

std::vector<Span> TimelineStore::spans(LaneRange lanes, const TimeAxis& axis,
                                       double width_pixels) const {
  const double ps_per_pixel = axis.seconds_per_pixel() * 1e12;
  const double origin_ps = axis.origin_s() * 1e12;
  const auto from = static_cast<std::int64_t>(std::floor(origin_ps));
  const auto to = static_cast<std::int64_t>(std::ceil(origin_ps + width_pixels * ps_per_pixel));
  MergedItems merged(*this, lanes, from, to);
  auto column = [&](std::int64_t ps) {
    return std::floor((static_cast<double>(ps) - origin_ps) / ps_per_pixel);
  };

  std::vector<Span> out;
  bool open = false;  // whether the last span is a merge candidate (inside one column)
  double open_column = 0;
  std::int64_t longest_ps = 0;  // duration of the last span's representative op
  while (const LaneItem* next = merged.next()) {
    const LaneItem& item = *next;
    const std::int64_t duration = item.end_ps - item.start_ps;
    const double start_column = column(item.start_ps);
    const bool inside_one_column = column(item.end_ps) == start_column;
    if (open && inside_one_column && start_column == open_column) {
      Span& span = out.back();
      span.end_ps = std::max(span.end_ps, item.end_ps);
      ++span.count;
      if (duration > longest_ps) {
        span.op = item.op;
        longest_ps = duration;
      }
      continue;
    }
    out.push_back({item.start_ps, item.end_ps, item.op, 1});
    open = inside_one_column;
    open_column = start_column;
    longest_ps = duration;
  }
  return out;
}

std::optional<engine::OpId> TimelineStore::op_at(LaneRange lanes, std::int64_t time_ps,
                                                 std::int64_t slack_ps) const {
  MergedItems merged(*this, lanes, time_ps - slack_ps, time_ps + slack_ps + 1);
  std::optional<engine::OpId> best;
  std::int64_t best_distance = 0;
  while (const LaneItem* next = merged.next()) {
    const LaneItem& item = *next;
    const std::int64_t distance = time_ps < item.start_ps
                                      ? item.start_ps - time_ps
                                      : (time_ps >= item.end_ps ? time_ps - item.end_ps : 0);
    // Under the cursor, the later start wins: it is painted over the earlier.
    if (!best || distance < best_distance || (distance == 0 && best_distance == 0)) {
      best = item.op;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace clustersim::gui
