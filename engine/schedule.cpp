#include "engine/schedule.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <unordered_set>

namespace clustersim::engine {

std::string index_text(std::uint32_t i) {
  return i == kNone ? std::string("none") : std::to_string(i);
}

static_assert(sizeof(Op) == 40, "Op stays small: millions of them at 10k GPUs (DESIGN.md)");
static_assert(alignof(Op) == 8, "Op is not packed: its 8-byte field stays aligned");

std::string_view to_string(OpKind k) {
  return kOpKindNames.name(k);
}
std::string_view to_string(Category c) {
  return kCategoryNames.name(c);
}
std::string_view to_string(CollectiveType t) {
  return kCollectiveTypeNames.name(t);
}
std::string_view to_string(Algorithm a) {
  return kAlgorithmNames.name(a);
}

bool is_communication(Category c) {
  return c == Category::dp_comm || c == Category::tp_comm || c == Category::pp_comm ||
         c == Category::ep_comm || c == Category::cp_comm;
}

std::string Schedule::label(const Op& op) const {
  std::string s = names[op.name];
  if (op.microbatch() != kNone) s += " mb" + std::to_string(op.microbatch());
  return s;
}

std::uint32_t FlopInterner::intern(double flops, std::vector<double>& table) {
  const auto bits = std::bit_cast<std::uint64_t>(flops);
  if (last_ != kNone && bits == last_bits_) return last_;
  const auto [it, added] = index_.try_emplace(bits, static_cast<std::uint32_t>(table.size()));
  if (added) table.push_back(flops);
  last_bits_ = bits;
  last_ = it->second;
  return last_;
}

ScheduleBuilder::ScheduleBuilder(std::uint32_t num_ranks) {
  if (num_ranks == 0) throw std::invalid_argument("schedule: a schedule needs at least one rank");
  schedule_.num_ranks = num_ranks;
}

StreamId ScheduleBuilder::stream(std::string_view name) {
  auto& names = schedule_.stream_names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<StreamId>(i);
  names.emplace_back(name);
  return static_cast<StreamId>(names.size() - 1);
}

OpId ScheduleBuilder::last_on(Rank rank, StreamId stream) const {
  const OpStore::Reader ops = schedule_.ops.reader();  // backwards through the last run
  for (auto i = static_cast<OpId>(schedule_.ops.size()); i-- > 0;) {
    const Op op = ops[i];
    if (op.rank != rank) break;
    if (op.stream == stream) return i;
  }
  return kNone;
}

std::uint32_t ScheduleBuilder::intern(std::string_view name) {
  // Looked up as a view first: nearly every name is known already (each layer's ops recur every
  // micro-batch), and building the std::string key allocated once per op for longer names.
  // Before that, the name interned after the last one: ranks of a stage issue the same ops in
  // the same order, so the names come in the order they were first interned, and one compare
  // replaces hashing the name and probing the table (names are unique, so it is the same id).
  const std::uint32_t next = last_interned_ + 1;
  if (next < schedule_.names.size() && schedule_.names[next] == name) return last_interned_ = next;
  if (const auto it = name_index_.find(name); it != name_index_.end())
    return last_interned_ = it->second;
  const auto id = static_cast<std::uint32_t>(schedule_.names.size());
  name_index_.emplace(std::string(name), id);
  schedule_.names.emplace_back(name);
  return last_interned_ = id;
}

GroupId ScheduleBuilder::add_group(std::vector<Rank> ranks, std::string name) {
  if (ranks.empty()) throw std::invalid_argument("schedule: process group '" + name + "' is empty");
  std::unordered_set<Rank> seen;
  for (Rank r : ranks) {
    if (r >= schedule_.num_ranks)
      throw std::invalid_argument("schedule: process group '" + name + "' names rank " +
                                  std::to_string(r) + " of " + std::to_string(schedule_.num_ranks));
    if (!seen.insert(r).second)
      throw std::invalid_argument("schedule: process group '" + name + "' lists rank " +
                                  std::to_string(r) + " twice");
  }
  schedule_.groups.push_back({std::move(ranks), std::move(name)});
  return static_cast<GroupId>(schedule_.groups.size() - 1);
}

void ScheduleBuilder::post_sends_on(GroupId group) {
  if (group >= schedule_.groups.size())
    throw std::invalid_argument("schedule: sends posted on unknown group " + std::to_string(group));
  auto& comm = schedule_.send_comm;
  if (comm.empty()) comm.assign(schedule_.num_ranks, kNone);
  for (Rank r : schedule_.groups[group].ranks) {
    if (comm[r] != kNone && comm[r] != group)
      throw std::invalid_argument("schedule: rank " + std::to_string(r) + " posts its sends on '" +
                                  schedule_.groups[comm[r]].name + "' and on '" +
                                  schedule_.groups[group].name + "'");
    comm[r] = group;
  }
}

GroupId Schedule::send_group(Rank src, Rank dst) const {
  if (src >= send_comm.size() || dst >= send_comm.size()) return kNone;
  const GroupId g = send_comm[src];
  return g != kNone && send_comm[dst] == g ? g : kNone;
}

GroupId Schedule::send_group(const Op& op) const {
  if (op.kind == OpKind::send) return send_group(op.rank, op.group_or_peer);
  if (op.kind == OpKind::recv) return send_group(op.group_or_peer, op.rank);
  return kNone;
}

std::uint32_t Schedule::simulated_ranks() const {
  if (mirror.empty()) return num_ranks;
  std::uint32_t n = 0;
  for (Rank r = 0; r < num_ranks; ++r)
    n += mirror[r] == r ? 1 : 0;
  return n;
}

void ScheduleBuilder::fold(std::vector<Rank> mirror) {
  if (!schedule_.ops.empty())
    throw std::invalid_argument("schedule: a schedule is folded before its first op");
  if (mirror.size() != schedule_.num_ranks)
    throw std::invalid_argument("schedule: the fold names " + std::to_string(mirror.size()) +
                                " ranks of " + std::to_string(schedule_.num_ranks));
  for (Rank r = 0; r < mirror.size(); ++r)
    if (mirror[r] >= mirror.size() || mirror[mirror[r]] != mirror[r])
      throw std::invalid_argument("schedule: rank " + std::to_string(r) +
                                  " mirrors a rank that is not simulated");
  schedule_.mirror = std::move(mirror);
}

OpId ScheduleBuilder::push(const Common& c, Op op) {
  if (c.rank >= schedule_.num_ranks)
    throw std::invalid_argument("schedule: op '" + std::string(c.name) + "' on rank " +
                                std::to_string(c.rank) + " of " +
                                std::to_string(schedule_.num_ranks));
  if (!schedule_.simulated(c.rank))
    throw std::invalid_argument("schedule: op '" + std::string(c.name) + "' on rank " +
                                std::to_string(c.rank) + ", which is folded onto rank " +
                                std::to_string(schedule_.mirror[c.rank]));
  if (c.stream >= schedule_.stream_names.size())
    throw std::invalid_argument("schedule: op '" + std::string(c.name) + "' on an unknown stream");
  const auto id = static_cast<OpId>(schedule_.ops.size());
  if (schedule_.ops.size() >= kNone - 1) throw std::length_error("schedule: too many ops");
  op.rank = c.rank;
  op.stream = c.stream;
  op.category = c.category;
  op.name = intern(c.name);
  if (!Op::fits_index(c.microbatch) || !Op::fits_index(c.chunk))
    throw std::invalid_argument(
        "schedule: op '" + std::string(c.name) + "' on rank " + std::to_string(c.rank) +
        " has micro-batch " + index_text(c.microbatch) + " and chunk " + index_text(c.chunk) +
        "; an op's micro-batch and chunk are at most " + std::to_string(Op::kMaxIndex));
  op.set_microbatch(c.microbatch);
  op.set_chunk(c.chunk);
  if (c.deps.size() > Op::kMaxDeps)
    throw std::invalid_argument("schedule: op '" + std::string(c.name) + "' on rank " +
                                std::to_string(c.rank) + " has " + std::to_string(c.deps.size()) +
                                " dependencies; an op has at most " + std::to_string(Op::kMaxDeps));
  op.deps_begin = static_cast<std::uint32_t>(schedule_.deps.size());
  op.deps_count = static_cast<std::uint16_t>(c.deps.size());
  for (OpId d : c.deps) {
    if (d >= id || schedule_.ops[d].rank != c.rank)
      throw std::invalid_argument("schedule: op '" + std::string(c.name) +
                                  "' depends on an op that is not an earlier op of rank " +
                                  std::to_string(c.rank));
    schedule_.deps.push_back(d);
  }
  schedule_.ops.push_back(op);
  return id;
}

OpId ScheduleBuilder::compute(const Common& c, double flops, std::uint64_t bytes,
                              std::uint8_t precision, std::uint32_t kernels) {
  if (kernels != kNone && kernels >= schedule_.kernels.size())
    throw std::invalid_argument("schedule: op '" + std::string(c.name) + "' names kernel list " +
                                std::to_string(kernels) + " of " +
                                std::to_string(schedule_.kernels.size()));
  Op op;
  op.kind = OpKind::compute;
  op.set_flop_index(flop_interner_.intern(flops, schedule_.flop_values));
  op.bytes = bytes;
  op.set_precision(precision);
  op.kernels = kernels;
  return push(c, op);
}

OpId ScheduleBuilder::copy(const Common& c, std::uint64_t bytes, CopyDirection direction) {
  Op op;
  op.kind = OpKind::copy;
  op.bytes = bytes;
  op.set_tag(static_cast<std::uint32_t>(direction));
  return push(c, op);
}

OpId ScheduleBuilder::collective(const Common& c, CollectiveType type, GroupId group,
                                 std::uint64_t bytes, Algorithm algorithm, std::uint32_t root) {
  if (group >= schedule_.groups.size())
    throw std::invalid_argument("schedule: collective '" + std::string(c.name) +
                                "' on an unknown group");
  if (root >= schedule_.groups[group].ranks.size())
    throw std::invalid_argument("schedule: collective '" + std::string(c.name) +
                                "' has a root outside its group");
  Op op;
  op.kind = OpKind::collective;
  op.collective = type;
  op.group_or_peer = group;
  op.bytes = bytes;
  op.algorithm = algorithm;
  op.set_tag(root);
  return push(c, op);
}

OpId ScheduleBuilder::send(const Common& c, Rank peer, std::uint64_t bytes, std::uint32_t tag) {
  if (peer >= schedule_.num_ranks || peer == c.rank)
    throw std::invalid_argument("schedule: send '" + std::string(c.name) + "' to invalid peer " +
                                std::to_string(peer));
  Op op;
  op.kind = OpKind::send;
  op.collective = CollectiveType::send_recv;
  op.group_or_peer = peer;
  op.bytes = bytes;
  op.set_tag(tag);
  return push(c, op);
}

OpId ScheduleBuilder::recv(const Common& c, Rank peer, std::uint64_t bytes, std::uint32_t tag) {
  if (peer >= schedule_.num_ranks || peer == c.rank)
    throw std::invalid_argument("schedule: recv '" + std::string(c.name) + "' from invalid peer " +
                                std::to_string(peer));
  Op op;
  op.kind = OpKind::recv;
  op.collective = CollectiveType::send_recv;
  op.group_or_peer = peer;
  op.bytes = bytes;
  op.set_tag(tag);
  return push(c, op);
}

OpId ScheduleBuilder::stamp(OpId first, OpId last, const StampMap& map) {
  auto& ops = schedule_.ops;
  auto& deps = schedule_.deps;
  if (first > last || last > ops.size())
    throw std::invalid_argument("schedule: stamping ops outside the schedule");
  if (map.rank >= schedule_.num_ranks || !schedule_.simulated(map.rank))
    throw std::invalid_argument("schedule: stamping ops onto rank " + std::to_string(map.rank) +
                                ", which issues none");
  const auto base = static_cast<OpId>(ops.size());
  const std::size_t n = last - first;
  if (ops.size() + n >= kNone - 1) throw std::length_error("schedule: too many ops");
  if (n == 0) return base;
  const std::size_t deps_base = deps.size();
  std::pair<OpStore::Stamp, bool> stamped;
  try {
    stamped = stamp_deps(first, last, base, map);
  } catch (...) {
    deps.resize(deps_base);  // a rejected stamp adds nothing
    throw;
  }
  auto& [stamp, contiguous] = stamped;
  if (!contiguous || !ops.append_stamp(first, n, stamp)) {
    // Not readable as one stamped run (ops [first, last) stamped themselves, or their
    // dependency lists not one after another): copies held as records.
    stamp.deps_shift = 0;
    std::uint32_t next = static_cast<std::uint32_t>(deps_base);
    const OpStore::Reader source_ops = ops.reader();
    for (OpId i = first; i < last; ++i) {
      Op op = OpStore::stamped(stamp, source_ops[i]);
      op.deps_begin = next;
      next += op.deps_count;
      ops.push_back(op);
    }
  }
  return base;
}

// Appends the copies' dependency lists and returns what the copies change in each op: the
// rank, each group and peer they name, and the shift of the dependency lists; and whether the
// lists of ops [first, last) are one after another (else no one shift holds).
std::pair<OpStore::Stamp, bool> ScheduleBuilder::stamp_deps(OpId first, OpId last, OpId base,
                                                            const StampMap& map) {
  const auto& ops = schedule_.ops;
  auto& deps = schedule_.deps;
  OpStore::Stamp stamp;
  stamp.rank = map.rank;
  const auto map_once = [](OpStore::Stamp::Map& m, std::uint32_t from, const auto& to) {
    const auto it = std::lower_bound(m.begin(), m.end(), std::pair{from, std::uint32_t{0}});
    if (it != m.end() && it->first == from) return;
    m.insert(it, {from, to(from)});
  };
  const std::uint32_t first_deps = ops[first].deps_begin;
  const Rank source = ops[first].rank;
  std::uint32_t expected = first_deps;  // where the next op's list begins if they are contiguous
  bool contiguous = true;
  const OpStore::Reader source_ops = ops.reader();
  for (OpId i = first; i < last; ++i) {
    const Op op = source_ops[i];
    if (op.rank != source) throw std::invalid_argument("schedule: stamped ops must be of one rank");
    if (op.kind == OpKind::collective) {
      map_once(stamp.groups, op.group_or_peer, [&](GroupId g) {
        const GroupId to = map.group(g);
        if (to >= schedule_.groups.size())
          throw std::invalid_argument("schedule: a stamped collective on an unknown group");
        return to;
      });
    } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      map_once(stamp.peers, op.group_or_peer, [&](Rank p) {
        const Rank to = map.peer(p);
        if (to >= schedule_.num_ranks || to == map.rank)
          throw std::invalid_argument("schedule: a stamped send or recv with an invalid peer");
        return to;
      });
    }
    contiguous = contiguous && op.deps_begin == expected;
    expected = op.deps_begin + op.deps_count;
    for (std::uint32_t k = op.deps_begin; k < op.deps_begin + op.deps_count; ++k) {
      const OpId d = deps[k];
      if (d >= first) {
        deps.push_back(d - first + base);
        continue;
      }
      const OpId e = map.earlier(d);
      if (e >= base || ops[e].rank != map.rank)
        throw std::invalid_argument(
            "schedule: a stamped op depends on an op that is not an earlier op of rank " +
            std::to_string(map.rank));
      deps.push_back(e);
    }
  }
  // the copies' lists begin where the first copy's does
  stamp.deps_shift = static_cast<std::uint32_t>(deps.size() - (expected - first_deps)) - first_deps;
  return {std::move(stamp), contiguous};
}

Schedule ScheduleBuilder::finish() && {
  if (schedule_.stream_names.empty()) schedule_.stream_names.emplace_back("compute");
  return std::move(schedule_);
}

}  // namespace clustersim::engine
