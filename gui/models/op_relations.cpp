#include "gui/models/op_relations.hpp"

#include <unordered_map>

namespace clustersim::gui {

namespace {

using engine::OpKind;

bool is_point_to_point(OpKind kind) {
  return kind == OpKind::send || kind == OpKind::recv;
}

// The n-th collective the group's every other member issues on it, n being `op`'s position on
// its own rank.
std::vector<engine::OpId> collective_peers(const engine::Schedule& s, engine::OpId id) {
  const engine::Op& op = s.ops[id];
  const engine::GroupId group = op.group_or_peer;
  const engine::OpStore::Reader in_order = s.ops.reader();
  std::uint32_t position = 0;
  for (engine::OpId i = 0; i < id; ++i)
    if (const engine::Op other = in_order[i];
        other.kind == OpKind::collective && other.rank == op.rank && other.group_or_peer == group)
      ++position;
  std::unordered_map<engine::Rank, std::uint32_t> issued;
  std::vector<engine::OpId> peers;
  for (engine::OpId i = 0; i < s.ops.size(); ++i) {
    const engine::Op other = in_order[i];
    if (other.kind != OpKind::collective || other.group_or_peer != group || other.rank == op.rank)
      continue;
    if (issued[other.rank]++ == position) peers.push_back(i);
  }
  return peers;
}

std::optional<engine::OpId> point_to_point_partner(const engine::Schedule& s, engine::OpId id) {
  const engine::Op& op = s.ops[id];
  const OpKind partner_kind = op.kind == OpKind::send ? OpKind::recv : OpKind::send;
  auto same_channel = [&](const engine::Op& other, OpKind kind, engine::Rank rank,
                          engine::Rank peer) {
    return other.kind == kind && other.rank == rank && other.group_or_peer == peer &&
           other.tag() == op.tag();
  };
  const engine::OpStore::Reader in_order = s.ops.reader();
  std::uint32_t position = 0;
  for (engine::OpId i = 0; i < id; ++i)
    if (same_channel(in_order[i], op.kind, op.rank, op.group_or_peer)) ++position;
  std::uint32_t seen = 0;
  for (engine::OpId i = 0; i < s.ops.size(); ++i)
    if (same_channel(in_order[i], partner_kind, op.group_or_peer, op.rank) && seen++ == position)
      return i;
  return std::nullopt;
}

}  // namespace

OpRelations relations_of(const engine::Schedule& schedule, engine::OpId id) {
  OpRelations out;
  const engine::Op& op = schedule.ops[id];
  const auto deps = schedule.dependencies(op);
  out.dependencies.assign(deps.begin(), deps.end());
  if (op.kind == OpKind::collective)
    out.peers = collective_peers(schedule, id);
  else if (is_point_to_point(op.kind))
    out.partner = point_to_point_partner(schedule, id);
  return out;
}

std::string transfer_text(const engine::Schedule& schedule, const engine::Timeline& timeline,
                          engine::OpId id) {
  using engine::OpKind;
  const engine::Op op = schedule.ops[id];
  std::string text;
  if (op.kind == OpKind::collective && op.group_or_peer < schedule.groups.size()) {
    text = std::string(engine::to_string(op.collective)) + " on " +
           schedule.groups[op.group_or_peer].name;
    if (id < timeline.algorithm.size() && id < timeline.protocol.size())
      text += " · " + std::string(engine::to_string(timeline.algorithm[id])) + " / " +
              std::string(engine::to_string(timeline.protocol[id]));
  } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
    const bool send = op.kind == OpKind::send;
    text =
        std::string(send ? "send to rank " : "recv from rank ") + std::to_string(op.group_or_peer);
    const engine::GroupId comm = schedule.send_group(op);
    if (comm != engine::kNone) text += " on " + schedule.groups[comm].name;
  } else {
    return {};
  }
  if (id < timeline.channels.size() && timeline.channels[id] > 0)
    text += " · " + std::to_string(timeline.channels[id]) +
            (timeline.channels[id] == 1 ? " channel" : " channels");
  return text;
}

}  // namespace clustersim::gui
