// Perfetto protobuf traces (docs/outputs.md "Perfetto protobuf") of the DDP scenario worked out by
// hand in tests/models/test_ddp.cpp (tests/data/ddp-by-hand.yaml): 4 GPUs at 100 TFLOP/s,
// layers L0..L3 with 4e9, 1e9, 2e9, 1e9 forward FLOPs per sample. By hand: forward 40, 10, 20,
// 10 us from 0, so L0's forward slice is [0, 40000] ns and L3's [70000, 80000] ns; backward
// (L3..L0) 20, 40, 20, 80 us from 80 us, so L0's backward is [160000, 240000] ns.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/frontend.hpp"
#include "perfetto_trace.pb.h"

namespace clustersim::models {
namespace {

namespace fs = std::filesystem;
namespace pb = perfetto::protos;

const std::string kScenario = std::string(CLUSTERSIM_TEST_DATA) + "/ddp-by-hand.yaml";

struct Slice {
  std::string track;  // "rank R/stream"
  std::string name;
  std::uint64_t begin = 0, end = 0;
};

struct Decoded {
  std::map<std::uint64_t, std::string> tracks;          // uuid -> "rank R/stream"
  std::map<std::uint64_t, std::string> counter_tracks;  // uuid -> "rank R/memory", "network/..."
  std::vector<Slice> slices;
  std::map<std::string, std::vector<double>> counters;  // track name -> values
  std::multiset<std::uint64_t> flow_starts, flow_ends;
};

// zlib's inflate of a whole bundle, as trace processor does it.
std::string inflated(const std::string& compressed) {
  std::string out(64u << 20, '\0');
  uLongf size = out.size();
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                       reinterpret_cast<const Bytef*>(compressed.data()), compressed.size()),
            Z_OK);
  out.resize(size);
  return out;
}

// The file's packets, each compressed bundle replaced by the packets it holds: an inflated bundle
// is itself a serialized Trace (framed `packet` fields).
pb::Trace packets_of(const std::string& path, int* bundles = nullptr) {
  std::ifstream in(path, std::ios::binary);
  pb::Trace file;
  EXPECT_TRUE(file.ParseFromIstream(&in)) << path;
  pb::Trace flat;
  for (const pb::TracePacket& p : file.packet()) {
    if (!p.has_compressed_packets()) {
      *flat.add_packet() = p;
      continue;
    }
    if (bundles != nullptr) ++*bundles;
    EXPECT_FALSE(p.has_trusted_packet_sequence_id());
    pb::Trace bundle;
    EXPECT_TRUE(bundle.ParseFromString(inflated(p.compressed_packets())));
    for (const pb::TracePacket& inner : bundle.packet())
      *flat.add_packet() = inner;
  }
  return flat;
}

// Reads the file as Perfetto's Trace message and pairs each slice's begin with its end, as
// Perfetto does per track.
Decoded decode(const std::string& path) {
  const pb::Trace trace = packets_of(path);
  Decoded d;
  std::map<std::uint64_t, std::string> names;        // interned iid -> name
  std::map<std::uint64_t, std::string> processes;    // uuid -> process name
  std::map<std::uint64_t, std::vector<Slice>> open;  // track -> open slices
  EXPECT_GT(trace.packet_size(), 0);
  if (trace.packet_size() > 0) {
    EXPECT_EQ(trace.packet(0).sequence_flags(), pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  }
  for (const pb::TracePacket& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    for (const auto& n : p.interned_data().event_names())
      names[n.iid()] = n.name();
    if (p.has_track_descriptor()) {
      const auto& t = p.track_descriptor();
      if (t.has_process())
        processes[t.uuid()] = t.process().process_name();
      else
        (t.has_counter() ? d.counter_tracks : d.tracks)[t.uuid()] =
            processes.at(t.parent_uuid()) + "/" + t.name();
      continue;
    }
    if (!p.has_track_event()) continue;
    const auto& e = p.track_event();
    const bool counter = e.type() == pb::TrackEvent::TYPE_COUNTER;
    const std::string& track = (counter ? d.counter_tracks : d.tracks).at(e.track_uuid());
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        open[e.track_uuid()].push_back({track, names.at(e.name_iid()), p.timestamp(), 0});
        for (auto f : e.flow_ids())
          d.flow_starts.insert(f);
        for (auto f : e.terminating_flow_ids())
          d.flow_ends.insert(f);
        break;
      case pb::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[e.track_uuid()];
        EXPECT_FALSE(stack.empty()) << "an end without a begin on " << track;
        if (stack.empty()) break;
        Slice s = stack.back();
        stack.pop_back();
        s.end = p.timestamp();
        EXPECT_LE(s.begin, s.end) << s.name;
        d.slices.push_back(s);
        break;
      }
      case pb::TrackEvent::TYPE_COUNTER:
        d.counters[track].push_back(e.double_counter_value());
        break;
      default:
        ADD_FAILURE() << "unexpected event type " << e.type();
    }
  }
  for (const auto& [track, stack] : open)
    EXPECT_TRUE(stack.empty()) << stack.size() << " slices left open";
  return d;
}

const Slice* find(const Decoded& d, const std::string& track, const std::string& name) {
  for (const Slice& s : d.slices)
    if (s.track == track && s.name == name) return &s;
  return nullptr;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((fs::temp_directory_path() / ("clustersim-" + std::to_string(::getpid()) + "-" + name))
                 .string()) {}
  ~TempFile() { fs::remove(path); }
};

// The hand-computed DDP run, with `overrides`.
Prediction by_hand(std::vector<std::string> overrides = {}) {
  RunRequest request;
  request.scenario = kScenario;
  request.overrides = std::move(overrides);
  return predict(request);
}

TEST(PerfettoTrace, SlicesSitWhereTheHandComputedTimelinePutsThem) {
  const Prediction p = by_hand({"simulation.fold=none"});  // every rank's lanes
  const TempFile file("ddp.pftrace");
  write_trace(p, file.path);
  const Decoded d = decode(file.path);

  // A process per rank, a track per stream, one slice per op.
  const auto& s = p.output.built.schedule;
  EXPECT_EQ(d.tracks.size(), 4 * s.stream_names.size());
  EXPECT_EQ(d.slices.size(), s.ops.size());
  for (int r = 0; r < 4; ++r) {
    const std::string compute = "rank " + std::to_string(r) + "/compute";
    const Slice* l0 = find(d, compute, "L0 fwd mb0");
    const Slice* l3 = find(d, compute, "L3 fwd mb0");
    const Slice* back = find(d, compute, "L0 bwd mb0");
    ASSERT_TRUE(l0 != nullptr && l3 != nullptr && back != nullptr) << compute;
    EXPECT_EQ(l0->begin, 0u);
    EXPECT_EQ(l0->end, 40'000u);
    EXPECT_EQ(l3->begin, 70'000u);
    EXPECT_EQ(l3->end, 80'000u);
    EXPECT_EQ(back->begin, 160'000u);
    EXPECT_EQ(back->end, 240'000u);
  }
  EXPECT_TRUE(d.flow_starts.empty());  // DDP sends nothing point to point
  // The peak rank's memory, as in the JSON trace.
  const auto memory = "rank " + std::to_string(p.output.result.memory.peak_rank) + "/memory";
  ASSERT_EQ(d.counters.count(memory), 1u);
  EXPECT_EQ(d.counters.at(memory).size(), p.output.result.memory.timeline.size());
}

// A two-stage pipeline: every send starts an arrow that its recv ends, once each.
TEST(PerfettoTrace, EachSendStartsAnArrowItsRecvEnds) {
  const Prediction p =
      by_hand({"parallel.pp=2", "cluster.gpus_per_node=2", "training.global_batch=4"});
  const TempFile file("pp.pftrace");
  write_trace(p, file.path);
  const Decoded d = decode(file.path);
  std::size_t sends = 0;
  for (const auto& op : p.output.built.schedule.ops)
    sends += op.kind == engine::OpKind::send;
  ASSERT_GT(sends, 0u);
  EXPECT_EQ(d.flow_starts.size(), sends);
  EXPECT_EQ(d.flow_ends, d.flow_starts);
  EXPECT_EQ(std::set<std::uint64_t>(d.flow_starts.begin(), d.flow_starts.end()).size(), sends);
}

// --trace-ranks 1,3 and a window [50 us, 100 us]: only those ranks' slices that overlap it.
TEST(PerfettoTrace, AFilterKeepsTheChosenRanksAndWindow) {
  const Prediction p = by_hand({"simulation.fold=none"});
  engine::TraceFilter filter;
  filter.ranks = parse_rank_list("3,1");
  filter.from = engine::Time::from_seconds(50e-6);
  filter.to = engine::Time::from_seconds(100e-6);
  for (const char* name : {"window.pftrace", "window.json"}) {
    SCOPED_TRACE(name);
    const TempFile file(name);
    write_trace(p, file.path, {}, filter);
    if (!is_perfetto_path(file.path)) {
      std::ifstream in(file.path);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_EQ(text.find("\"pid\":0,"), std::string::npos);
      EXPECT_NE(text.find("\"pid\":1,"), std::string::npos);
      continue;
    }
    const Decoded d = decode(file.path);
    ASSERT_FALSE(d.slices.empty());
    for (const Slice& s : d.slices) {
      EXPECT_TRUE(s.track.rfind("rank 1/", 0) == 0 || s.track.rfind("rank 3/", 0) == 0) << s.track;
      EXPECT_LE(s.begin, 100'000u) << s.name;
      EXPECT_GE(s.end, 50'000u) << s.name;
    }
    // L2's forward [50, 70] us and L3's [70, 80] us are in; L0's [0, 40] us is not.
    EXPECT_NE(find(d, "rank 1/compute", "L2 fwd mb0"), nullptr);
    EXPECT_EQ(find(d, "rank 1/compute", "L0 fwd mb0"), nullptr);
  }
}

TEST(PerfettoTrace, RankListsAndFiltersAreChecked) {
  EXPECT_EQ(parse_rank_list("0-3,8,2"), (std::vector<engine::Rank>{0, 1, 2, 3, 8}));
  for (const char* bad : {"", "0-", "-3", "a", "3-1", "1,,2", "0-99999999999"})
    EXPECT_THROW(parse_rank_list(bad), std::invalid_argument) << bad;
  const Prediction p = by_hand();
  engine::TraceFilter filter;
  filter.ranks = {4};  // the run has ranks 0 to 3
  EXPECT_THROW(check_trace_filter(p, filter), std::invalid_argument);
  filter.ranks = {1};  // folded onto rank 0: one NVSwitch node under the analytical model
  ASSERT_EQ(p.output.built.folded_replicas, 4);
  EXPECT_THROW(check_trace_filter(p, filter), std::invalid_argument);
  filter.ranks = {0};
  EXPECT_NO_THROW(check_trace_filter(p, filter));
  filter.ranks = {};
  filter.from = engine::Time::from_seconds(2e-6);
  filter.to = engine::Time::from_seconds(1e-6);
  EXPECT_THROW(check_trace_filter(p, filter), std::invalid_argument);
}

// protoc, from the schema alone, reads the file as a Trace (written plain: a compressed one shows
// its bundles as bytes).
TEST(PerfettoTrace, ProtocDecodesTheFileAsAPerfettoTrace) {
  const Prediction p = by_hand();
  const TempFile file("decode.pftrace");
  const TempFile text("decode.txt");
  write_trace(p, file.path, {}, {}, /*compress=*/false);
  const fs::path proto(CLUSTERSIM_PERFETTO_PROTO);
  const std::string command = std::string(CLUSTERSIM_PROTOC) +
                              " --decode=perfetto.protos.Trace -I " + proto.parent_path().string() +
                              " " + proto.filename().string() + " < " + file.path + " > " +
                              text.path;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(text.path);
  const std::string decoded((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(decoded.find("type: TYPE_SLICE_BEGIN"), std::string::npos);
  EXPECT_NE(decoded.find("process_name: \"rank 0\""), std::string::npos);
  EXPECT_NE(decoded.find("name: \"L0 fwd mb0\""), std::string::npos);
}

// Compressed, the file holds the same packets in bundles (one here: the run is small), and is
// smaller (the GPT-3 trace's ratio is in docs/outputs.md, measured by clustersim_bench).
TEST(PerfettoTrace, CompressedBundlesHoldThePlainFilesPackets) {
  const Prediction p = by_hand();
  const TempFile plain("plain.pftrace");
  const TempFile compressed("compressed.pftrace");
  write_trace(p, plain.path, {}, {}, /*compress=*/false);
  write_trace(p, compressed.path);
  int bundles = 0;
  const pb::Trace from_plain = packets_of(plain.path, &bundles);
  EXPECT_EQ(bundles, 0);
  const pb::Trace from_compressed = packets_of(compressed.path, &bundles);
  EXPECT_EQ(bundles, 1);
  ASSERT_EQ(from_compressed.packet_size(), from_plain.packet_size());
  EXPECT_EQ(from_compressed.SerializeAsString(), from_plain.SerializeAsString());
  EXPECT_LT(fs::file_size(compressed.path), fs::file_size(plain.path));
}

}  // namespace
}  // namespace clustersim::models
