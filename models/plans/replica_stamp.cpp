#include "models/plans/replica_stamp.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace clustersim::models {

using engine::GroupId;
using engine::kNone;
using engine::OpId;
using engine::Rank;

namespace {

// HSDP's default shard group: the members of a rank's dp group on its node
// (hsdp_shard_group). Their number if it is the same on every node for every dp group, else 0.
int dp_members_per_node(const PlanContext& ctx) {
  const RankLayout& layout = ctx.layout;
  const int world = layout.world_size();
  const int gpus = ctx.gpus_per_node;
  if (gpus <= 0) return 0;
  int members = -1;
  std::map<Rank, int> count;  // dp group (its first member) -> its members on this node
  for (int node_first = 0; node_first < world; node_first += gpus) {
    count.clear();
    for (int r = node_first; r < std::min(world, node_first + gpus); ++r) {
      RankCoords c = layout.coords(static_cast<Rank>(r));
      c.cp = c.ep = c.dp = 0;
      ++count[layout.rank(c)];
    }
    for (const auto& [group, n] : count) {
      if (members != -1 && n != members) return 0;
      members = n;
    }
  }
  return std::max(members, 0);
}

// HSDP's shard groups are `size` consecutive members of a dp group (hsdp_shard_group). They are
// replicas to stamp only if each is a run of whole dp indices (all cp and ep ranks of them), the
// same run in every dp group: so the dp axis must vary slowest in a dp group, and the size must
// be the same for every rank and a multiple of cp × ep dividing the dp group.
int hsdp_width(const PlanContext& ctx) {
  const ParallelConfig& p = ctx.parallel;
  const RankLayout& layout = ctx.layout;
  const int inner = p.cp * p.ep;  // dp-group members per dp index
  const std::vector<Rank> members = layout.dp_group(0);
  for (std::size_t i = 0; i < members.size(); ++i)
    if (layout.coords(members[i]).dp != static_cast<int>(i) / inner) return 0;
  const int size = p.fsdp.shard_group > 0 ? p.fsdp.shard_group : dp_members_per_node(ctx);
  if (size <= 0 || size % inner != 0 || static_cast<int>(members.size()) % size != 0) return 0;
  const int width = size / inner;
  return width < p.dp / p.ep ? width : 0;  // one shard group: nothing to stamp
}

}  // namespace

int replica_width(const PlanContext& ctx) {
  const ParallelConfig& p = ctx.parallel;
  if (p.dp / p.ep <= 1) return 0;
  return p.data_parallel == DataParallel::hsdp ? hsdp_width(ctx) : 1;
}

ReplicaStamper::ReplicaStamper(const PlanContext& ctx, engine::ScheduleBuilder& builder,
                               ProcessGroups& groups, bool replicas, bool tensor_parallel)
    : layout_(ctx.layout), builder_(builder), groups_(groups) {
  width_ = replicas ? replica_width(ctx) : 0;
  tp_ = tensor_parallel && ctx.parallel.tp > 1 ? ctx.parallel.tp : 1;
  enabled_ = width_ > 0 || tp_ > 1;
  const auto world = static_cast<std::size_t>(layout_.world_size());
  blocks_.resize(world);
  if (enabled_) logs_.resize(world);
}

Rank ReplicaStamper::source(Rank r) const {
  if (!enabled_) return r;
  RankCoords c = layout_.coords(r);
  if (width_ > 0) c.dp %= width_;
  if (tp_ > 1) c.tp = 0;
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

Rank ReplicaStamper::rotated(Rank x, Rank r) const {
  if (tp_ <= 1) return x;
  // The source has tp index 0: a rank it names at tp index t is, from r's, at t + r's index (a
  // rotation of the tensor-parallel indices, which maps every tp group onto itself).
  RankCoords c = layout_.coords(x);
  c.tp = (c.tp + layout_.coords(r).tp) % tp_;
  return layout_.rank(c);
}

Rank ReplicaStamper::shifted(Rank x, Rank r) const {
  if (width_ <= 0) return x;
  RankCoords c = layout_.coords(x);
  if (c.dp >= width_)
    throw std::logic_error("stamping: rank " + std::to_string(x) +
                           " is not in the first data-parallel replica");
  c.dp += layout_.coords(r).dp / width_ * width_;
  return layout_.rank(c);
}

Rank ReplicaStamper::counterpart(Rank x, Rank r) const {
  return shifted(rotated(x, r), r);
}

// The group `r` asks for where its source asked for `g`. First g's ranks rotated along the tp
// axis by r's index: a group that maps onto itself (a tp group) stays g. The rotated group where
// `r` is a member (a data-parallel group, HSDP's replica group, spans the replicas), else its
// ranks shifted into r's replica (HSDP: the shard group of `r`'s, as the source's is of its own).
GroupId ReplicaStamper::group_for(GroupId g, Rank r, std::string_view kind) {
  const std::vector<Rank> ranks = builder_.peek().groups[g].ranks;  // get() may add groups
  // First the tensor-parallel rotation: a group it maps onto itself (a tp group) stays.
  std::vector<Rank> turned(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    turned[i] = rotated(ranks[i], r);
  if (std::is_permutation(turned.begin(), turned.end(), ranks.begin())) turned = ranks;
  if (std::find(turned.begin(), turned.end(), r) != turned.end())
    return turned == ranks ? g : groups_.get(turned, kind);
  std::vector<Rank> mapped(turned.size());
  for (std::size_t i = 0; i < turned.size(); ++i)
    mapped[i] = shifted(turned[i], r);
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

std::size_t ReplicaStamper::building_ranks() const {
  std::size_t n = 0;
  for (Rank r = 0; r < static_cast<Rank>(layout_.world_size()); ++r)
    if (builder_.peek().simulated(r) && source(r) == r) ++n;
  return n;
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
