#include "engine/rendezvous.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine/huge_pages.hpp"
#include "engine/simulator.hpp"

namespace clustersim::engine {

namespace {

std::string describe(const Schedule& s, OpId id) {
  const Op& op = s.ops[id];
  return "'" + s.label(op) + "' (op " + std::to_string(id) + ", rank " + std::to_string(op.rank) +
         ")";
}

// Reports `base` + `span` × (ops scanned / ops) each time a scan in id order passes 2^16 more
// ids (the scan below skips compute ops, so it may pass several at once).
class ScanProgress {
 public:
  ScanProgress(const std::function<void(double)>& report, std::size_t ops, double base, double span)
      : report_(report), ops_(ops), base_(base), span_(span) {}
  void at(std::size_t id) {
    if (id < next_ || !report_) return;
    report_(base_ + span_ * static_cast<double>(id + 1) / static_cast<double>(ops_));
    next_ = (id / kEvery + 1) * kEvery;
  }
  void done() const {
    if (report_) report_(base_ + span_);
  }

 private:
  static constexpr std::size_t kEvery = std::size_t{1} << 16;
  const std::function<void(double)>& report_;
  std::size_t ops_;
  std::size_t next_ = kEvery - 1;
  double base_, span_;
};

// What one scan of the communication ops collects for the matching below, so that each is read
// once (a second time only where a group's calls disagree, to name the ops).
struct Scanned {
  // Per group: each member's collective ops in issue order.
  std::vector<std::vector<std::vector<OpId>>> by_member;
  // Per group: each call as the first member to issue it had it, and whether another member's
  // call differed. A call must agree across members; the scan checks that with the op in hand,
  // so only a group that disagrees has its ops read again (match_collectives names them).
  struct Call {
    std::uint64_t bytes;
    std::uint32_t tag;
    CollectiveType collective;
    Algorithm algorithm;
    static Call of(const Op& op) { return {op.bytes, op.tag(), op.collective, op.algorithm}; }
    bool operator==(const Call&) const = default;
  };
  std::vector<std::vector<Call>> calls;
  std::vector<std::uint8_t> disagrees;
  // Send and recv ops with their (src, dst, tag), in issue order.
  struct PointToPoint {
    Rank src, dst;
    std::uint32_t tag;
    OpId id;
  };
  std::vector<PointToPoint> sends, recvs;
  std::vector<OpId> host_copies;
  std::size_t collectives = 0;
};

Scanned scan(const Schedule& s, ScanProgress progress) {
  Scanned out;
  out.by_member.resize(s.groups.size());
  out.calls.resize(s.groups.size());
  out.disagrees.assign(s.groups.size(), 0);
  // Each rank's groups with its place in them: a few entries a rank, where a table of every
  // group × every rank grew with the ranks squared (0.2 GB at 16,384 GPUs).
  std::vector<std::vector<std::pair<GroupId, std::uint32_t>>> member_of(s.num_ranks);
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    out.by_member[g].resize(s.groups[g].ranks.size());
    for (std::size_t i = 0; i < s.groups[g].ranks.size(); ++i)
      member_of[s.groups[g].ranks[i]].emplace_back(static_cast<GroupId>(g),
                                                   static_cast<std::uint32_t>(i));
  }
  // Compute ops take no part: a stamped replica's are not even read.
  s.ops.for_each_non_compute([&](OpId id, const Op& op) {
    progress.at(id);
    switch (op.kind) {
      case OpKind::collective: {
        const auto& groups = member_of[op.rank];
        const auto it = std::find_if(groups.begin(), groups.end(),
                                     [&](const auto& m) { return m.first == op.group_or_peer; });
        if (it == groups.end())
          throw SimulationError("schedule: collective " + describe(s, id) + " on group '" +
                                s.groups[op.group_or_peer].name + "' that rank " +
                                std::to_string(op.rank) + " is not a member of");
        std::vector<OpId>& mine = out.by_member[op.group_or_peer][it->second];
        std::vector<Scanned::Call>& calls = out.calls[op.group_or_peer];
        const Scanned::Call call = Scanned::Call::of(op);
        if (mine.size() == calls.size())  // the first member to issue this call
          calls.push_back(call);
        else if (calls[mine.size()] != call)
          out.disagrees[op.group_or_peer] = 1;
        mine.push_back(id);
        ++out.collectives;
        break;
      }
      case OpKind::send:
        out.sends.push_back({op.rank, op.group_or_peer, op.tag(), id});
        break;
      case OpKind::recv:
        out.recvs.push_back({op.group_or_peer, op.rank, op.tag(), id});
        break;
      default:
        if (is_host_copy(op)) out.host_copies.push_back(id);
    }
  });
  progress.done();
  return out;
}

// Throws, naming both ops, where a member's call `call` on group `g` differs from the first
// member's: what the scan found somewhere in the group.
void check_calls_agree(const Schedule& s, GroupId g, std::size_t call,
                       const std::vector<std::vector<OpId>>& members,
                       const std::vector<OpStore::Reader>& ops) {
  const Op first = ops[0][members[0][call]];
  for (std::size_t m = 1; m < members.size(); ++m) {
    const OpId id = members[m][call];
    const Op op = ops[m][id];
    if (Scanned::Call::of(op) != Scanned::Call::of(first))
      throw SimulationError(
          "schedule: collective call " + std::to_string(call) + " on group '" + s.groups[g].name +
          "' does not match: " + describe(s, members[0][call]) + " is " +
          std::string(to_string(first.collective)) + " of " + std::to_string(first.bytes) +
          " bytes, " + describe(s, id) + " is " + std::string(to_string(op.collective)) + " of " +
          std::to_string(op.bytes) + " bytes");
  }
}

void match_collectives(const Schedule& s, Rendezvous& r, std::span<std::uint32_t> instance_of,
                       Scanned& scanned) {
  auto& by_member = scanned.by_member;
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    const auto& ranks = s.groups[g].ranks;
    // Members folded onto another rank issue nothing; the simulated ones must agree.
    std::vector<std::size_t> present;
    for (std::size_t m = 0; m < ranks.size(); ++m)
      if (s.simulated(ranks[m])) present.push_back(m);
    if (present.empty()) continue;
    std::vector<std::vector<OpId>> members;
    members.reserve(present.size());
    for (std::size_t m : present)
      members.push_back(std::move(by_member[g][m]));
    // Each member's calls go forward in its own ops: a reader each (read where they disagree).
    const std::vector<OpStore::Reader> ops(scanned.disagrees[g] ? members.size() : 0,
                                           s.ops.reader());
    const std::size_t calls = members[0].size();
    for (std::size_t m = 1; m < members.size(); ++m)
      if (members[m].size() != calls)
        throw SimulationError("schedule: on group '" + s.groups[g].name + "' rank " +
                              std::to_string(ranks[present[0]]) + " issues " +
                              std::to_string(calls) + " collectives but rank " +
                              std::to_string(ranks[present[m]]) + " issues " +
                              std::to_string(members[m].size()));
    for (std::size_t call = 0; call < calls; ++call) {
      Rendezvous::Instance inst;
      inst.ops_begin = static_cast<std::uint32_t>(r.ops.size());
      inst.size = static_cast<std::uint32_t>(members.size());
      inst.group = static_cast<GroupId>(g);
      if (scanned.disagrees[g]) check_calls_agree(s, static_cast<GroupId>(g), call, members, ops);
      for (std::size_t m = 0; m < members.size(); ++m) {
        const OpId id = members[m][call];
        instance_of[id] = static_cast<std::uint32_t>(r.instances.size());
        r.ops.push_back(id);
      }
      r.instances.push_back(inst);
    }
  }
}

void match_point_to_point(const Schedule& s, Rendezvous& r, std::span<std::uint32_t> instance_of,
                          std::vector<Scanned::PointToPoint>& sends,
                          std::vector<Scanned::PointToPoint>& recvs) {
  // Pairs go by (src, dst, tag), each key's in issue order (a stable sort keeps it): the order
  // of the std::map of lists this replaces, so the instances are numbered as before.
  const auto by_key = [](const Scanned::PointToPoint& a, const Scanned::PointToPoint& b) {
    return std::tie(a.src, a.dst, a.tag) < std::tie(b.src, b.dst, b.tag);
  };
  std::stable_sort(sends.begin(), sends.end(), by_key);
  std::stable_sort(recvs.begin(), recvs.end(), by_key);
  using Key = std::tuple<Rank, Rank, std::uint32_t>;
  const auto key_of = [](const Scanned::PointToPoint& p) { return Key{p.src, p.dst, p.tag}; };
  // A key's sends (and receives) are one rank's, in issue order: a reader each.
  const OpStore::Reader send_ops = s.ops.reader(), recv_ops = s.ops.reader();
  std::size_t ri = 0;   // recvs before ri are paired, or orphans
  OpId orphan = kNone;  // the first recv (by key) that no send has
  for (std::size_t si = 0; si < sends.size();) {
    const Key key = key_of(sends[si]);
    std::size_t se = si;
    while (se < sends.size() && key_of(sends[se]) == key)
      ++se;
    // Recvs whose key no send has are reported below, as the map's leftovers were.
    while (ri < recvs.size() && key_of(recvs[ri]) < key) {
      if (orphan == kNone) orphan = recvs[ri].id;
      ++ri;
    }
    std::size_t re = ri;
    while (re < recvs.size() && key_of(recvs[re]) == key)
      ++re;
    const std::size_t count = se - si, matched = re - ri;
    if (matched != count) {
      const OpId unmatched = sends[si + std::min(matched, count - 1)].id;
      throw SimulationError("schedule: " + std::to_string(count) + " sends but " +
                            std::to_string(matched) + " recvs from rank " +
                            std::to_string(std::get<0>(key)) + " to rank " +
                            std::to_string(std::get<1>(key)) + " with tag " +
                            std::to_string(std::get<2>(key)) + ", e.g. " + describe(s, unmatched));
    }
    for (std::size_t i = 0; i < count; ++i) {
      const OpId snd = sends[si + i].id;
      const OpId rcv = recvs[ri + i].id;
      if (const auto sent = send_ops[snd].bytes, received = recv_ops[rcv].bytes; sent != received)
        throw SimulationError("schedule: " + describe(s, snd) + " sends " + std::to_string(sent) +
                              " bytes but " + describe(s, rcv) + " receives " +
                              std::to_string(received));
      Rendezvous::Instance inst;
      inst.ops_begin = static_cast<std::uint32_t>(r.ops.size());
      inst.size = 2;
      instance_of[snd] = instance_of[rcv] = static_cast<std::uint32_t>(r.instances.size());
      r.ops.push_back(snd);
      r.ops.push_back(rcv);
      r.instances.push_back(inst);
    }
    si = se;
    ri = re;
  }
  if (orphan == kNone && ri < recvs.size()) orphan = recvs[ri].id;
  if (orphan != kNone)
    throw SimulationError("schedule: " + describe(s, orphan) + " has no matching send");
}

// The pairing, once the ops are scanned: each communication op's instance into `instance_of`.
void pair(const Schedule& schedule, Scanned& scanned, Rendezvous& r,
          std::span<std::uint32_t> instance_of) {
  // Sized once: every communication op is a member of one instance.
  reserve_huge(r.ops, scanned.collectives + scanned.sends.size() + scanned.recvs.size() +
                          scanned.host_copies.size());
  match_collectives(schedule, r, instance_of, scanned);
  match_point_to_point(schedule, r, instance_of, scanned.sends, scanned.recvs);
  // A copy to or from host memory needs no peer: an instance of its own.
  for (OpId id : scanned.host_copies) {
    Rendezvous::Instance inst;
    inst.ops_begin = static_cast<std::uint32_t>(r.ops.size());
    inst.size = 1;
    instance_of[id] = static_cast<std::uint32_t>(r.instances.size());
    r.ops.push_back(id);
    r.instances.push_back(inst);
  }
}

}  // namespace

Rendezvous match_communication(const Schedule& schedule,
                               const std::function<void(double)>& progress) {
  Rendezvous r;
  const std::size_t n = schedule.ops.size();
  Scanned scanned = scan(schedule, ScanProgress(progress, n, 0.0, 0.5));
  r.instance_of.assign(n, kNone);
  pair(schedule, scanned, r, r.instance_of);
  if (progress) progress(1.0);
  return r;
}

Rendezvous match_communication(const Schedule& schedule, std::span<std::uint32_t> instance_of,
                               const std::function<void(double)>& progress) {
  if (instance_of.size() != schedule.ops.size())
    throw std::invalid_argument("match_communication: instance_of must have one entry per op");
  Rendezvous r;
  Scanned scanned = scan(schedule, ScanProgress(progress, schedule.ops.size(), 0.0, 0.5));
  pair(schedule, scanned, r, instance_of);
  if (progress) progress(1.0);
  return r;
}

}  // namespace clustersim::engine
