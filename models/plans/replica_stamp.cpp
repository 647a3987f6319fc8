#include "models/plans/replica_stamp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace clustersim::models {

using engine::GroupId;
using engine::kNone;
using engine::OpId;
using engine::Rank;

ReplicaStamper::ReplicaStamper(const RankLayout& layout, engine::ScheduleBuilder& builder,
                               ProcessGroups& groups, bool enabled)
    : layout_(layout), builder_(builder), groups_(groups), enabled_(enabled) {
  const auto world = static_cast<std::size_t>(layout.world_size());
  blocks_.resize(world);
  if (enabled_) logs_.resize(world);
}

Rank ReplicaStamper::source(Rank r) const {
  if (!enabled_) return r;
  RankCoords c = layout_.coords(r);
  c.dp = 0;
  return layout_.rank(c);
}

void ReplicaStamper::begin_build(Rank r) {
  // A rank's ops of one iteration are contiguous: they start where the schedule stands now.
  blocks_[r].push_back({static_cast<OpId>(builder_.size()), 0});
  if (!enabled_) return;
  logs_[r].clear();
  groups_.record(&logs_[r]);
}

void ReplicaStamper::end_build(Rank r) {
  groups_.record(nullptr);
  blocks_[r].back().size = static_cast<OpId>(builder_.size()) - blocks_[r].back().first;
}

Rank ReplicaStamper::counterpart(Rank x, Rank r) const {
  RankCoords c = layout_.coords(x);
  if (c.dp != 0)
    throw std::logic_error("stamping: rank " + std::to_string(x) +
                           " is not in the first data-parallel replica");
  c.dp = layout_.coords(r).dp;
  return layout_.rank(c);
}

// The group `r` asks for where its source asked for `g`: the same group where `r` is a member
// (a data-parallel group spans the replicas), else the group of the counterparts of g's ranks.
GroupId ReplicaStamper::group_for(GroupId g, Rank r, std::string_view kind) {
  const std::vector<Rank>& ranks = builder_.peek().groups[g].ranks;
  if (std::find(ranks.begin(), ranks.end(), r) != ranks.end()) return g;
  std::vector<Rank> mapped(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    mapped[i] = counterpart(ranks[i], r);
  return groups_.get(mapped, kind);
}

void ReplicaStamper::stamp(Rank r) {
  const Rank s = source(r);
  if (s == r || blocks_[s].size() != blocks_[r].size() + 1)
    throw std::logic_error("stamping: rank " + std::to_string(r) + " has no source to copy");
  const Block from = blocks_[s].back();
  std::vector<GroupId> mapped;  // the entries of group_map_ this stamp set
  const auto map_group = [&](GroupId g, std::string_view kind) {
    const GroupId to = group_for(g, r, kind);
    if (g >= group_map_.size()) group_map_.resize(g + 1, kNone);
    group_map_[g] = to;
    mapped.push_back(g);
    return to;
  };
  // The groups, created in the order the source's build asked for them.
  for (const auto& [g, kind] : logs_[s])
    map_group(g, kind);
  const std::vector<engine::ProcessGroup>& groups = builder_.peek().groups;
  engine::ScheduleBuilder::StampMap map;
  map.rank = r;
  map.group = [&](GroupId g) {
    if (g < group_map_.size() && group_map_[g] != kNone) return group_map_[g];
    // A group the plans looked up before this rank's build (none do today): asked for now.
    // (a copy: asking may add a group, which moves the names)
    const std::string kind = groups[g].name.substr(0, groups[g].name.find('['));
    return map_group(g, kind);
  };
  map.peer = [&](Rank peer) { return counterpart(peer, r); };
  map.earlier = [&](OpId op) { return copy_of(r, op); };
  const auto first = static_cast<OpId>(builder_.size());
  builder_.stamp(from.first, from.first + from.size, map);
  blocks_[r].push_back({first, from.size});
  for (const GroupId g : mapped)
    group_map_[g] = kNone;
}

OpId ReplicaStamper::copy_of(Rank r, OpId op) const {
  if (op == kNone) return kNone;
  const auto& from = blocks_[source(r)];
  const auto& to = blocks_[r];
  for (std::size_t i = std::min(from.size(), to.size()); i-- > 0;)
    if (op >= from[i].first && op - from[i].first < from[i].size)
      return to[i].first + (op - from[i].first);
  throw std::logic_error("stamping: op " + std::to_string(op) + " is not a copied op of rank " +
                         std::to_string(source(r)));
}

}  // namespace clustersim::models
