#include "models/perfetto/perfetto_trace.hpp"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/rendezvous.hpp"
#include "models/perfetto/packet_stream.hpp"
#include "perfetto_trace.pb.h"

namespace clustersim::models {

namespace {

namespace pb = perfetto::protos;
using engine::Op;
using engine::OpId;
using engine::Time;

// Every packet is on one sequence, which interns the names (Perfetto requires a sequence id for
// interning; the first packet clears the sequence's incremental state).
constexpr std::uint32_t kSequence = 1;
constexpr OpId kReportEvery = 65'536;

std::uint64_t nanoseconds(Time t) {
  return t.ps() <= 0 ? 0 : static_cast<std::uint64_t>(t.ps() / 1000);
}

// Track uuids: one per kept rank (its process), one per rank and stream, one for the network
// process, then the counter tracks. Small numbers keep the varints short.
struct Tracks {
  std::uint64_t streams = 1;
  std::uint64_t ranks = 1;
  std::uint64_t process(engine::Rank r) const { return 1 + r; }
  std::uint64_t lane(engine::Rank r, engine::StreamId s) const {
    return 1 + ranks + static_cast<std::uint64_t>(r) * streams + s;
  }
  std::uint64_t network() const { return 1 + ranks + ranks * streams; }
  std::uint64_t next_counter = 0;
};

class Writer {
 public:
  Writer(std::ostream& out, const engine::Schedule& s, const engine::Timeline& tl,
         const engine::Topology& topo, const engine::TraceOptions& options)
      : out_(out), s_(s), tl_(tl), topo_(topo), options_(options) {
    tracks_.ranks = s.num_ranks;
    tracks_.streams = std::max<std::size_t>(1, s.stream_names.size());
    tracks_.next_counter = tracks_.network() + 1;
  }

  void write() {
    descriptors();
    flows();
    slices();
    // After the last slice: a reader that has not met the network process knows the file is cut
    // short (a trace has no other end marker).
    network();
    counters();
    if (options_.progress) options_.progress(1.0);
    if (!packets_.finish()) throw std::runtime_error("could not write the Perfetto trace");
  }

 private:
  const engine::TraceFilter& filter() const { return options_.filter; }

  pb::TracePacket& fresh() {
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kSequence);
    if (first_) {
      packet_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      packet_.set_first_packet_on_sequence(true);
      first_ = false;
    }
    return packet_;
  }

  void descriptors() {
    for (engine::Rank r = 0; r < s_.num_ranks; ++r) {
      // Folded ranks issue no ops: their lanes would be their mirror's.
      if (!s_.simulated(r) || !filter().keeps_rank(r)) continue;
      auto* d = fresh().mutable_track_descriptor();
      d->set_uuid(tracks_.process(r));
      d->mutable_process()->set_pid(static_cast<std::int32_t>(r));
      d->mutable_process()->set_process_name("rank " + std::to_string(r));
      packets_.write(packet_);
      for (std::size_t t = 0; t < s_.stream_names.size(); ++t) {
        auto* lane = fresh().mutable_track_descriptor();
        lane->set_uuid(tracks_.lane(r, static_cast<engine::StreamId>(t)));
        lane->set_parent_uuid(tracks_.process(r));
        lane->set_name(s_.stream_names[t]);
        packets_.write(packet_);
      }
    }
  }

  void network() {
    auto* d = fresh().mutable_track_descriptor();
    d->set_uuid(tracks_.network());
    d->mutable_process()->set_pid(static_cast<std::int32_t>(s_.num_ranks));
    d->mutable_process()->set_process_name("network");
    packets_.write(packet_);
  }

  // Arrows from each send to its recv: the send's slice starts a flow, the recv's ends it.
  void flows() {
    const engine::Rendezvous matched = engine::match_communication(s_);
    std::uint64_t id = 0;
    for (const auto& inst : matched.instances) {
      if (!inst.send_recv()) continue;
      const OpId snd = matched.ops[inst.ops_begin];
      const OpId rcv = matched.ops[inst.ops_begin + 1];
      if (!kept(snd) || !kept(rcv)) continue;
      flow_from_[snd] = ++id;
      flow_to_[rcv] = id;
    }
  }

  bool kept(OpId id) const {
    return filter().keeps_rank(s_.ops[id].rank) && filter().keeps_time(tl_.start[id], tl_.end[id]);
  }

  // The interned id of the op's category, which says what the reader needs to restore it
  // (docs/outputs.md "Perfetto protobuf"): its category, its kind (a collective's type stands for
  // it), and a collective's group or a send's or recv's peer: `forward,compute`,
  // `tp-comm,all_reduce,tp[3]`, `pp-comm,send,to 9`, and after a send's or recv's peer the group
  // whose communicator it was posted on (`pp-comm,send,to 9,pp[0]`). One category per op keeps
  // it to two or three bytes; a new one travels in the packet that first uses it.
  std::uint64_t category_iid(const Op& op, pb::InternedData*& interned) {
    using engine::OpKind;
    const bool collective = op.kind == OpKind::collective;
    const bool p2p = op.kind == OpKind::send || op.kind == OpKind::recv;
    const engine::GroupId comm = s_.send_group(op);
    const std::uint64_t key = (static_cast<std::uint64_t>(op.category) << 48) |
                              (static_cast<std::uint64_t>(op.kind) << 40) |
                              (collective ? static_cast<std::uint64_t>(op.collective) << 32 : 0u) |
                              (collective || p2p ? op.group_or_peer : 0u);
    auto [it, inserted] = categories_.try_emplace({key, comm}, categories_.size() + 1);
    if (inserted) {
      std::string text =
          std::string(engine::to_string(op.category)) + "," +
          std::string(collective ? engine::to_string(op.collective) : engine::to_string(op.kind));
      if (collective) text += "," + s_.groups[op.group_or_peer].name;
      if (p2p)
        text += (op.kind == OpKind::send ? ",to " : ",from ") + std::to_string(op.group_or_peer) +
                (comm != engine::kNone ? "," + s_.groups[comm].name : "");
      if (interned == nullptr) interned = packet_.mutable_interned_data();
      auto* c = interned->add_event_categories();
      c->set_iid(it->second);
      c->set_name(std::move(text));
    }
    return it->second;
  }

  // The interned id of an op's label (name, micro-batch); a new one travels in the packet that
  // first uses it.
  std::uint64_t name_iid(const Op& op, pb::InternedData*& interned) {
    const std::uint64_t key = (static_cast<std::uint64_t>(op.name) << 32) | op.microbatch();
    auto [it, inserted] = names_.try_emplace(key, names_.size() + 1);
    if (inserted) {
      if (interned == nullptr) interned = packet_.mutable_interned_data();
      auto* n = interned->add_event_names();
      n->set_iid(it->second);
      n->set_name(s_.label(op));
    }
    return it->second;
  }
  void slices() {
    for (OpId id = 0; id < s_.ops.size(); ++id) {
      if (options_.progress && id % kReportEvery == 0)
        options_.progress(static_cast<double>(id) / static_cast<double>(s_.ops.size()));
      if (!kept(id)) continue;
      const Op& op = s_.ops[id];
      const std::uint64_t track = tracks_.lane(op.rank, op.stream);
      {
        pb::TracePacket& p = fresh();
        pb::InternedData* interned = nullptr;
        const std::uint64_t name = name_iid(op, interned);
        p.set_timestamp(nanoseconds(tl_.start[id]));
        auto* e = p.mutable_track_event();
        e->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
        e->set_track_uuid(track);
        e->set_name_iid(name);
        e->add_category_iids(category_iid(op, interned));
        if (op.kind == engine::OpKind::send) {
          if (auto f = flow_from_.find(id); f != flow_from_.end()) e->add_flow_ids(f->second);
        } else if (op.kind == engine::OpKind::recv) {
          if (auto f = flow_to_.find(id); f != flow_to_.end())
            e->add_terminating_flow_ids(f->second);
        }
        packets_.write(p);
      }
      pb::TracePacket& p = fresh();
      p.set_timestamp(nanoseconds(tl_.end[id]));
      auto* e = p.mutable_track_event();
      e->set_type(pb::TrackEvent::TYPE_SLICE_END);
      e->set_track_uuid(track);
      packets_.write(p);
    }
  }

  std::uint64_t counter_track(const std::string& name, std::uint64_t parent,
                              const std::string& unit) {
    const std::uint64_t uuid = tracks_.next_counter++;
    auto* d = fresh().mutable_track_descriptor();
    d->set_uuid(uuid);
    d->set_parent_uuid(parent);
    d->set_name(name);
    d->mutable_counter()->set_unit_name(unit);
    packets_.write(packet_);
    return uuid;
  }

  void counter(std::uint64_t track, Time at, double value) {
    pb::TracePacket& p = fresh();
    p.set_timestamp(nanoseconds(at));
    auto* e = p.mutable_track_event();
    e->set_type(pb::TrackEvent::TYPE_COUNTER);
    e->set_track_uuid(track);
    e->set_double_counter_value(value);
    packets_.write(p);
  }

  void counters() {
    std::unordered_map<engine::LinkId, std::uint64_t> link_track;
    for (engine::LinkId l : options_.counter_links)
      link_track.emplace(l, counter_track("util " + topo_.link(l).name, tracks_.network(), ""));
    for (const engine::LinkRateSample& sample : tl_.link_rates) {
      const auto it = link_track.find(sample.link);
      if (it == link_track.end() || !filter().keeps_time(sample.time, sample.time)) continue;
      counter(it->second, sample.time,
              sample.bytes_per_second / topo_.link(sample.link).bandwidth.bytes_per_second());
    }
    for (const engine::CounterTrack& track : options_.counters) {
      const bool network = track.pid == s_.num_ranks;
      if (!network && (!s_.simulated(track.pid) || !filter().keeps_rank(track.pid))) continue;
      const std::uint64_t uuid = counter_track(
          track.name, network ? tracks_.network() : tracks_.process(track.pid), track.series);
      for (const auto& [time, value] : track.points)
        if (filter().keeps_time(time, time)) counter(uuid, time, value);
    }
  }

  std::ostream& out_;
  const engine::Schedule& s_;
  const engine::Timeline& tl_;
  const engine::Topology& topo_;
  const engine::TraceOptions& options_;
  perfetto_framing::PacketStream packets_{out_, options_.compress};
  pb::TracePacket packet_;
  bool first_ = true;
  Tracks tracks_;
  std::unordered_map<std::uint64_t, std::uint64_t> names_;
  // (category, kind, type and group or peer; a send's communicator) -> the category's iid.
  struct CategoryHash {
    std::size_t operator()(const std::pair<std::uint64_t, engine::GroupId>& k) const {
      return std::hash<std::uint64_t>{}(
          k.first ^ (static_cast<std::uint64_t>(k.second) << 56) ^
          (static_cast<std::uint64_t>(k.second) * 0x9e3779b97f4a7c15u));
    }
  };
  std::unordered_map<std::pair<std::uint64_t, engine::GroupId>, std::uint64_t, CategoryHash>
      categories_;
  std::unordered_map<OpId, std::uint64_t> flow_from_, flow_to_;
};

}  // namespace

void write_perfetto_trace(std::ostream& out, const engine::Schedule& schedule,
                          const engine::Timeline& timeline, const engine::Topology& topology,
                          const engine::TraceOptions& options) {
  Writer(out, schedule, timeline, topology, options).write();
}

}  // namespace clustersim::models
