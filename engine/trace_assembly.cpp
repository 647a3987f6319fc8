#include "engine/trace_assembly.hpp"

#include <algorithm>
#include <numeric>

#include "engine/huge_pages.hpp"

namespace clustersim::engine {

namespace {

std::uint64_t stream_id(Rank rank, std::uint32_t tid) {
  return (static_cast<std::uint64_t>(rank) << 32) | tid;
}

// Reorders `v` so that its i-th element is the perm[i]-th of before.
template <typename T>
void permute(std::vector<T>& v, const std::vector<std::uint32_t>& perm) {
  std::vector<T> out;
  out.reserve(v.size());
  for (const std::uint32_t i : perm)
    out.push_back(v[i]);
  v = std::move(out);
}

}  // namespace

std::uint32_t TraceAssembly::intern(std::string_view name) {
  if (const auto it = name_index_.find(name); it != name_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(name);
  name_index_.emplace(std::string(name), id);
  return id;
}

std::uint32_t TraceAssembly::group(std::string_view name) {
  if (const auto it = group_index_.find(name); it != group_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(groups_.size());
  groups_.push_back({{}, std::string(name)});
  group_index_.emplace(std::string(name), id);
  return id;
}

std::uint32_t TraceAssembly::stream_key(Rank rank, std::uint32_t tid) {
  const std::uint64_t id = stream_id(rank, tid);
  if (id == last_stream_) return last_key_;
  auto [it, added] = stream_index_.try_emplace(id, static_cast<std::uint32_t>(streams_.size()));
  if (added) streams_.emplace_back(id, "stream " + std::to_string(tid));  // until it is named
  last_stream_ = id;
  last_key_ = it->second;
  return it->second;
}

void TraceAssembly::name_stream(std::uint32_t pid, std::uint32_t tid, std::string_view name) {
  streams_[stream_key(pid, tid)].second = name;
}

void TraceAssembly::reserve(std::size_t ops) {
  // Huge pages: filling 15 M ops otherwise takes a page fault every 4 KiB, a tenth of the time
  // of reading a trace.
  reserve_huge(ops_, ops);
  reserve_huge(start_, ops);
  reserve_huge(end_, ops);
  algorithm_.reserve(ops);
  protocol_.reserve(ops);
  channels_.reserve(ops);
}

std::size_t TraceAssembly::add(const Read& r) {
  if (r.rank >= kMaxTraceRanks || r.tid >= kMaxTraceStreams)
    throw TraceError(source_ + ": an op on rank " + std::to_string(r.rank) + ", stream " +
                     std::to_string(r.tid) + ": at most " + std::to_string(kMaxTraceRanks) +
                     " ranks and " + std::to_string(kMaxTraceStreams) + " streams");
  if (ops_.size() >= kNone - 1) throw TraceError(source_ + ": more ops than a schedule holds");
  stream_key(r.rank, r.tid);
  Op op;
  op.rank = r.rank;
  op.stream = static_cast<StreamId>(r.tid);
  op.name = r.name;
  op.category = r.category;
  op.kind = r.kind;
  if (r.kind == OpKind::compute) op.set_flop_index(flop_interner_.intern(r.flops, flop_values_));
  op.bytes = r.bytes;
  if (!Op::fits_index(r.microbatch) || !Op::fits_index(r.chunk))
    throw TraceError(source_ + ": op '" + name(r.name) + "' on rank " + std::to_string(r.rank) +
                     " has micro-batch " + index_text(r.microbatch) + " and chunk " +
                     index_text(r.chunk) + "; an op's micro-batch and chunk are at most " +
                     std::to_string(Op::kMaxIndex));
  op.set_microbatch(r.microbatch);
  op.set_chunk(r.chunk);
  switch (r.kind) {
    case OpKind::compute:
    case OpKind::copy:
      break;  // group_or_peer (Op::kernels for compute) stays kNone: no kernel list
    case OpKind::collective:
      op.collective = r.collective;
      op.group_or_peer = r.group_or_peer;
      if (auto& ranks = groups_.at(r.group_or_peer).ranks; ranks.empty() || ranks.back() != r.rank)
        ranks.push_back(r.rank);
      break;
    case OpKind::send:
    case OpKind::recv:
      op.collective = CollectiveType::send_recv;
      op.group_or_peer = r.group_or_peer;
      op.set_tag(r.tag);
      if (r.send_group != kNone) {
        const auto [it, added] = send_comm_.try_emplace(r.rank, r.send_group);
        if (!added && it->second != r.send_group)
          throw TraceError(source_ + ": rank " + std::to_string(r.rank) + " posts sends on '" +
                           groups_.at(it->second).name + "' and on '" +
                           groups_.at(r.send_group).name + "'; a rank posts them on one group");
        if (auto& ranks = groups_.at(r.send_group).ranks; ranks.empty() || ranks.back() != r.rank)
          ranks.push_back(r.rank);
      }
      break;
  }
  const std::size_t index = ops_.size();
  if (order_.empty() && r.order != index) {  // the first op out of place: keep every order now
    order_.resize(index);
    std::iota(order_.begin(), order_.end(), std::uint64_t{0});
  }
  if (!order_.empty()) order_.push_back(r.order);
  ops_.push_back(op);
  start_.push_back(r.start);
  end_.push_back(r.end);
  algorithm_.push_back(r.algorithm);
  protocol_.push_back(r.protocol);
  channels_.push_back(r.channels);
  max_rank_plus_one_ = std::max(max_rank_plus_one_, r.rank + 1);
  return index;
}

void TraceAssembly::sort_by_order() {
  if (order_.empty() || std::is_sorted(order_.begin(), order_.end())) {
    order_ = {};
    return;
  }
  std::vector<std::uint32_t> perm(ops_.size());
  std::iota(perm.begin(), perm.end(), 0u);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return order_[a] < order_[b]; });
  order_ = {};
  permute(ops_, perm);
  permute(start_, perm);
  permute(end_, perm);
  permute(algorithm_, perm);
  permute(protocol_, perm);
  permute(channels_, perm);
}

// Stream names interned in increasing tid, so a clustersim trace gets its stream ids back; then
// each op's tid becomes its stream's id.
void TraceAssembly::number_streams(Schedule& s) {
  std::vector<std::uint32_t> by_tid(streams_.size());
  std::iota(by_tid.begin(), by_tid.end(), 0u);
  auto tid_then_rank = [&](std::uint32_t i) {
    const std::uint64_t id = streams_[i].first;
    return std::pair<std::uint32_t, std::uint32_t>(id & 0xffffffffu, id >> 32);
  };
  std::sort(by_tid.begin(), by_tid.end(),
            [&](std::uint32_t a, std::uint32_t b) { return tid_then_rank(a) < tid_then_rank(b); });
  std::unordered_map<std::string_view, StreamId> ids;
  std::vector<StreamId> id_of(streams_.size());
  for (const std::uint32_t i : by_tid) {
    const std::string& name = streams_[i].second;
    auto it = ids.find(name);
    if (it == ids.end()) {
      // StreamId is 16 bits: a trace naming more streams cannot be held (nor drawn usefully).
      if (s.stream_names.size() == kMaxTraceStreams)
        throw TraceError(source_ + ": more than " + std::to_string(kMaxTraceStreams) +
                         " distinct stream (thread) names");
      it = ids.emplace(name, static_cast<StreamId>(s.stream_names.size())).first;
      s.stream_names.push_back(name);
    }
    id_of[i] = it->second;
  }
  for (Op& op : ops_)
    op.stream = id_of[stream_key(op.rank, op.stream)];
  if (s.stream_names.empty()) s.stream_names.emplace_back("compute");  // as ScheduleBuilder does
}

void TraceAssembly::check_peers(std::uint32_t ranks) const {
  for (const Op& op : ops_) {
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    if (op.group_or_peer < ranks && op.group_or_peer != op.rank) continue;
    const bool send = op.kind == OpKind::send;
    throw TraceError(source_ + ": schedule: " + (send ? "send '" : "recv '") + names_[op.name] +
                     (send ? "' to invalid peer " : "' from invalid peer ") +
                     std::to_string(op.group_or_peer));
  }
}

TraceContents TraceAssembly::finish() && {
  if (ops_.empty()) throw TraceError(source_ + ": no ops; is it a clustersim trace?");
  std::uint32_t ranks = max_rank_plus_one_;
  if (network_pid_) {
    if (*network_pid_ < ranks)
      throw TraceError(source_ + ": an op on pid " + std::to_string(ranks - 1) +
                       ", which is not below the \"network\" process's pid " +
                       std::to_string(*network_pid_) + " (pids 0..N-1 are the ranks)");
    ranks = *network_pid_;  // ranks without ops (folded, filtered out) still count
  }
  check_peers(ranks);
  sort_by_order();

  TraceContents out;
  Schedule& s = out.schedule;
  s.num_ranks = ranks;
  number_streams(s);
  for (ProcessGroup& g : groups_) {
    if (g.ranks.empty()) throw TraceError(source_ + ": group '" + g.name + "' names no rank");
    std::sort(g.ranks.begin(), g.ranks.end());
    g.ranks.erase(std::unique(g.ranks.begin(), g.ranks.end()), g.ranks.end());
  }
  s.groups = std::move(groups_);
  if (!send_comm_.empty()) {
    s.send_comm.assign(ranks, kNone);
    for (const auto& [rank, group] : send_comm_)
      s.send_comm[rank] = group;
  }
  s.names = std::move(names_);
  s.ops = std::move(ops_);
  s.flop_values = std::move(flop_values_);

  Timeline& tl = out.timeline;
  tl.makespan = end_.empty() ? Time::zero() : *std::max_element(end_.begin(), end_.end());
  tl.launch = start_;  // a trace keeps no time spent waiting for peers
  tl.start = std::move(start_);
  tl.end = std::move(end_);
  tl.algorithm = std::move(algorithm_);
  tl.protocol = std::move(protocol_);
  tl.channels = std::move(channels_);
  return out;
}

}  // namespace clustersim::engine
