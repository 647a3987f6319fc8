#include "engine/op_store.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim::engine {

std::uint32_t OpStore::mapped(const Stamp& s, const Op& op) {
  const Stamp::Map& map = op.kind == OpKind::collective ? s.groups : s.peers;
  const std::uint32_t from = op.group_or_peer;
  const auto it = std::lower_bound(map.begin(), map.end(), std::pair{from, std::uint32_t{0}});
  // ScheduleBuilder::stamp maps every group and peer its run names
  return it != map.end() && it->first == from ? it->second : kNone;
}

OpStore::OpStore(std::vector<Op> ops) : records_(std::move(ops)), size_(records_.size()) {
  for (std::size_t i = 0; i < records_.size(); ++i)
    if (records_[i].kind != OpKind::compute) non_compute_.push_back(static_cast<std::uint32_t>(i));
}

void OpStore::push_back(const Op& op) {
  if (size_ >= kNone - 1) throw std::length_error("schedule: too many ops");
  if (!runs_.empty() && runs_.back().stamp != kNone)
    runs_.push_back({static_cast<OpId>(size_), static_cast<std::uint32_t>(records_.size()), kNone});
  if (op.kind != OpKind::compute)
    non_compute_.push_back(static_cast<std::uint32_t>(records_.size()));
  records_.push_back(op);
  ++size_;
  if (!runs_.empty()) grow_pages();
}

bool OpStore::append_stamp(OpId first, std::size_t count, Stamp stamp) {
  if (count == 0) return true;
  if (first > size_ || count > size_ - first)
    throw std::invalid_argument("schedule: stamping ops outside the schedule");
  if (size_ + count >= kNone - 1) throw std::length_error("schedule: too many ops");
  const auto last = static_cast<OpId>(first + count - 1);
  std::uint32_t record = first;
  if (runs_.empty()) {  // every op so far is the record at its own index: one run of records
    runs_.push_back({0, 0, kNone});
    grow_pages();
  } else {
    const std::size_t run = run_of(first);
    if (runs_[run].stamp != kNone || last >= run_end(run)) return false;
    record = runs_[run].record + (first - runs_[run].begin);
  }
  stamps_.push_back(std::move(stamp));
  runs_.push_back(
      {static_cast<OpId>(size_), record, static_cast<std::uint32_t>(stamps_.size() - 1)});
  size_ += count;
  grow_pages();
  return true;
}

void OpStore::grow_pages() {
  // A page whose first id is new lies in the last run: ids only grow at the end.
  while ((pages_.size() << kPageBits) < size_)
    pages_.push_back(static_cast<std::uint32_t>(runs_.size() - 1));
}

std::size_t OpStore::run_of(OpId id) const {
  const std::size_t page = id >> kPageBits;
  const auto from = runs_.begin() + pages_[page];
  const auto to = page + 1 < pages_.size() ? runs_.begin() + pages_[page + 1] + 1 : runs_.end();
  // the last run that begins at or before id
  const auto it = std::upper_bound(from, to, id, [](OpId i, const Run& r) { return i < r.begin; });
  return static_cast<std::size_t>(it - runs_.begin()) - 1;
}

void OpStore::Reader::find(OpId id) const {
  run_ = store_->run_of(id);
  begin_ = store_->runs_[run_].begin;
  length_ = store_->run_end(run_) - begin_;
}

}  // namespace clustersim::engine
