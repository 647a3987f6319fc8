#include "engine/rendezvous.hpp"

#include <map>
#include <string>
#include <tuple>

#include "engine/simulator.hpp"

namespace clustersim::engine {

namespace {

std::string describe(const Schedule& s, OpId id) {
  const Op& op = s.ops[id];
  return "'" + s.label(op) + "' (op " + std::to_string(id) + ", rank " + std::to_string(op.rank) +
         ")";
}

// Reports `base` + `span` × (ops scanned / ops) every 2^16 ops of a scan.
class ScanProgress {
 public:
  ScanProgress(const std::function<void(double)>& report, std::size_t ops, double base, double span)
      : report_(report), ops_(ops), base_(base), span_(span) {}
  void at(std::size_t id) const {
    if (report_ && id % kEvery == kEvery - 1)
      report_(base_ + span_ * static_cast<double>(id + 1) / static_cast<double>(ops_));
  }
  void done() const {
    if (report_) report_(base_ + span_);
  }

 private:
  static constexpr std::size_t kEvery = std::size_t{1} << 16;
  const std::function<void(double)>& report_;
  std::size_t ops_;
  double base_, span_;
};

void match_collectives(const Schedule& s, Rendezvous& r, const ScanProgress& progress) {
  // Per group: each member's collective ops in issue order.
  std::vector<std::vector<std::vector<OpId>>> by_member(s.groups.size());
  std::vector<std::vector<std::int32_t>> position(s.groups.size());
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    by_member[g].resize(s.groups[g].ranks.size());
    position[g].assign(s.num_ranks, -1);
    for (std::size_t i = 0; i < s.groups[g].ranks.size(); ++i)
      position[g][s.groups[g].ranks[i]] = static_cast<std::int32_t>(i);
  }
  for (OpId id = 0; id < s.ops.size(); ++id) {
    progress.at(id);
    const Op& op = s.ops[id];
    if (op.kind != OpKind::collective) continue;
    const std::int32_t pos = position[op.group_or_peer][op.rank];
    if (pos < 0)
      throw SimulationError("schedule: collective " + describe(s, id) + " on group '" +
                            s.groups[op.group_or_peer].name + "' that rank " +
                            std::to_string(op.rank) + " is not a member of");
    by_member[op.group_or_peer][static_cast<std::size_t>(pos)].push_back(id);
  }
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
      const Op& first = s.ops[members[0][call]];
      for (const auto& member : members) {
        const OpId id = member[call];
        const Op& op = s.ops[id];
        if (op.collective != first.collective || op.bytes != first.bytes || op.tag != first.tag ||
            op.algorithm != first.algorithm)
          throw SimulationError(
              "schedule: collective call " + std::to_string(call) + " on group '" +
              s.groups[g].name + "' does not match: " + describe(s, members[0][call]) + " is " +
              std::string(to_string(first.collective)) + " of " + std::to_string(first.bytes) +
              " bytes, " + describe(s, id) + " is " + std::string(to_string(op.collective)) +
              " of " + std::to_string(op.bytes) + " bytes");
        r.instance_of[id] = static_cast<std::uint32_t>(r.instances.size());
        r.ops.push_back(id);
      }
      r.instances.push_back(inst);
    }
  }
  progress.done();
}

void match_point_to_point(const Schedule& s, Rendezvous& r, const ScanProgress& progress) {
  // (src, dst, tag) -> ops in issue order. std::map keeps the pairing order deterministic.
  using Key = std::tuple<Rank, Rank, std::uint32_t>;
  std::map<Key, std::vector<OpId>> sends;
  std::map<Key, std::vector<OpId>> recvs;
  for (OpId id = 0; id < s.ops.size(); ++id) {
    progress.at(id);
    const Op& op = s.ops[id];
    if (op.kind == OpKind::send) sends[{op.rank, op.group_or_peer, op.tag}].push_back(id);
    if (op.kind == OpKind::recv) recvs[{op.group_or_peer, op.rank, op.tag}].push_back(id);
  }
  for (const auto& [key, send_ops] : sends) {
    auto it = recvs.find(key);
    const std::size_t matched = it == recvs.end() ? 0 : it->second.size();
    if (matched != send_ops.size()) {
      const OpId unmatched = send_ops[std::min(matched, send_ops.size() - 1)];
      throw SimulationError("schedule: " + std::to_string(send_ops.size()) + " sends but " +
                            std::to_string(matched) + " recvs from rank " +
                            std::to_string(std::get<0>(key)) + " to rank " +
                            std::to_string(std::get<1>(key)) + " with tag " +
                            std::to_string(std::get<2>(key)) + ", e.g. " + describe(s, unmatched));
    }
    for (std::size_t i = 0; i < send_ops.size(); ++i) {
      const OpId snd = send_ops[i];
      const OpId rcv = it->second[i];
      if (s.ops[snd].bytes != s.ops[rcv].bytes)
        throw SimulationError("schedule: " + describe(s, snd) + " sends " +
                              std::to_string(s.ops[snd].bytes) + " bytes but " + describe(s, rcv) +
                              " receives " + std::to_string(s.ops[rcv].bytes));
      Rendezvous::Instance inst;
      inst.ops_begin = static_cast<std::uint32_t>(r.ops.size());
      inst.size = 2;
      r.instance_of[snd] = r.instance_of[rcv] = static_cast<std::uint32_t>(r.instances.size());
      r.ops.push_back(snd);
      r.ops.push_back(rcv);
      r.instances.push_back(inst);
    }
    recvs.erase(it);
  }
  if (!recvs.empty()) {
    const OpId orphan = recvs.begin()->second.front();
    throw SimulationError("schedule: " + describe(s, orphan) + " has no matching send");
  }
  progress.done();
}

}  // namespace

Rendezvous match_communication(const Schedule& schedule,
                               const std::function<void(double)>& progress) {
  Rendezvous r;
  r.instance_of.assign(schedule.ops.size(), kNone);
  const std::size_t n = schedule.ops.size();
  match_collectives(schedule, r, ScanProgress(progress, n, 0.0, 0.5));
  match_point_to_point(schedule, r, ScanProgress(progress, n, 0.5, 0.5));
  // A copy to or from host memory needs no peer: an instance of its own.
  for (OpId id = 0; id < n; ++id) {
    if (!is_host_copy(schedule.ops[id])) continue;
    Rendezvous::Instance inst;
    inst.ops_begin = static_cast<std::uint32_t>(r.ops.size());
    inst.size = 1;
    r.instance_of[id] = static_cast<std::uint32_t>(r.instances.size());
    r.ops.push_back(id);
    r.instances.push_back(inst);
  }
  return r;
}

}  // namespace clustersim::engine
