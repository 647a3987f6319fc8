// Traces read back (models::read_trace: models/perfetto/perfetto_reader.hpp for .pftrace,
// engine/trace_reader.hpp for JSON) against what the simulator produced: each run is simulated,
// written by the CLI's writer in both formats and read again, and every op is compared with the
// run's own Schedule and Timeline. The Perfetto trace keeps whole nanoseconds, so its times are
// the Timeline's picoseconds cut to the nanosecond below; the JSON keeps picoseconds.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/rendezvous.hpp"
#include "models/frontend.hpp"
#include "models/perfetto/perfetto_reader.hpp"
#include "models/perfetto/perfetto_trace.hpp"
#include "perfetto_trace.pb.h"

namespace clustersim::models {
namespace {

namespace fs = std::filesystem;
namespace pb = perfetto::protos;
using engine::OpKind;

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((fs::temp_directory_path() /
              ("clustersim-reader-" + std::to_string(::getpid()) + "-" + name))
                 .string()) {}
  ~TempFile() { fs::remove(path); }
};

Prediction run(const std::string& scenario, std::vector<std::string> overrides) {
  RunRequest request;
  request.scenario = scenario;
  request.overrides = std::move(overrides);
  request.overrides.push_back("simulation.fold=none");  // every rank's lanes
  return predict(request);
}

// The ops that meet op `id` in one transfer, by id, in increasing order.
std::vector<engine::OpId> partners(const engine::Rendezvous& r, engine::OpId id) {
  const std::uint32_t i = r.instance_of[id];
  if (i == engine::kNone) return {};
  const auto& inst = r.instances[i];
  std::vector<engine::OpId> ops(r.ops.begin() + inst.ops_begin,
                                r.ops.begin() + inst.ops_begin + inst.size);
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::int64_t to_ns_floor(engine::Time t) {
  return t.ps() / 1000 * 1000;
}

// Writes `p`'s trace as `name` (the extension picks the format), reads it back and compares it
// op by op with the run.
void expect_round_trip(const Prediction& p, const std::string& name, bool compress = true) {
  SCOPED_TRACE(name + (compress ? "" : " plain"));
  const bool perfetto = is_perfetto_path(name);
  const TempFile file(name);
  write_trace(p, file.path, {}, {}, compress);
  const engine::TraceContents back = read_trace(file.path);
  const engine::Schedule& s = p.output.built.schedule;
  const engine::Timeline& tl = p.output.timeline;
  const engine::Schedule& r = back.schedule;
  ASSERT_EQ(r.num_ranks, s.num_ranks);
  EXPECT_EQ(r.stream_names, s.stream_names);
  ASSERT_EQ(r.ops.size(), s.ops.size());
  auto time = [&](engine::Time t) { return perfetto ? to_ns_floor(t) : t.ps(); };
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& want = s.ops[id];
    const engine::Op& got = r.ops[id];
    SCOPED_TRACE(s.label(want));
    ASSERT_EQ(r.label(got), s.label(want));
    ASSERT_EQ(got.rank, want.rank);
    ASSERT_EQ(got.stream, want.stream);
    ASSERT_EQ(got.kind, want.kind);
    ASSERT_EQ(got.category, want.category);
    ASSERT_EQ(back.timeline.start[id].ps(), time(tl.start[id]));
    ASSERT_EQ(back.timeline.end[id].ps(), time(tl.end[id]));
    if (want.kind == OpKind::collective) {
      ASSERT_EQ(got.collective, want.collective);
      const engine::ProcessGroup& g = s.groups[want.group_or_peer];
      std::vector<engine::Rank> members = g.ranks;
      std::sort(members.begin(), members.end());
      ASSERT_EQ(r.groups[got.group_or_peer].name, g.name);
      ASSERT_EQ(r.groups[got.group_or_peer].ranks, members);
    } else if (want.kind == OpKind::send || want.kind == OpKind::recv) {
      ASSERT_EQ(got.group_or_peer, want.group_or_peer);
      // The communicator it was posted on (a 1F1B pipeline's group), or none (the pair's).
      const bool send = want.kind == OpKind::send;
      const engine::Rank from = send ? want.rank : want.group_or_peer;
      const engine::Rank to = send ? want.group_or_peer : want.rank;
      const engine::GroupId wg = s.send_group(from, to), gg = r.send_group(from, to);
      ASSERT_EQ(gg == engine::kNone, wg == engine::kNone);
      if (wg != engine::kNone) {
        ASSERT_EQ(r.groups[gg].name, s.groups[wg].name);
      }
    }
    if (!perfetto) {  // the arguments only the JSON keeps
      ASSERT_EQ(r.flops(got), s.flops(want));
      ASSERT_EQ(got.bytes, want.bytes);
      ASSERT_EQ(got.microbatch(), want.microbatch());
      ASSERT_EQ(got.chunk(), want.chunk());
      ASSERT_EQ(back.timeline.algorithm[id], tl.algorithm[id]);
    }
  }
  EXPECT_EQ(back.timeline.makespan.ps(), time(tl.makespan));
  // The guessed groups and the sends' tags match communication as the simulator matched it.
  const engine::Rendezvous want = engine::match_communication(s);
  const engine::Rendezvous got = engine::match_communication(r);
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    ASSERT_EQ(partners(got, id), partners(want, id)) << s.label(s.ops[id]);
}

const std::string kDdp = std::string(CLUSTERSIM_TEST_DATA) + "/ddp-by-hand.yaml";
const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR;

// DDP (data-parallel all-reduces), TP × PP (tensor-parallel collectives, pipeline sends and
// recvs on their own streams), EP (all-to-all), an interleaved pipeline (virtual stages).
TEST(PerfettoReader, EveryOpComesBackAsTheSimulatorRanIt) {
  const std::vector<Prediction> runs = {
      run(kDdp, {}),
      run(kScenarios + "/llama2-7b-pcie-pp4.yaml", {"training.global_batch=8", "parallel.tp=2"}),
      run(kScenarios + "/mixtral-8x7b-ep8-dgx-h100.yaml", {"training.global_batch=8"}),
      run(kScenarios + "/llama3-70b-8xdgx-h100-interleaved.yaml",
          {"training.global_batch=16", "cluster.nodes=2", "parallel.tp=4"}),
  };
  std::map<std::string, std::size_t> seen;  // what the runs exercise, by hand count below
  for (const Prediction& p : runs) {
    for (const engine::Op& op : p.output.built.schedule.ops)
      ++seen[op.kind == OpKind::collective ? std::string(engine::to_string(op.collective))
                                           : std::string(engine::to_string(op.kind))];
    SCOPED_TRACE(p.scenario.name);
    expect_round_trip(p, "t.pftrace");
    expect_round_trip(p, "t.perfetto-trace", /*compress=*/false);
    expect_round_trip(p, "t.json");
  }
  for (const char* kind : {"compute", "send", "recv", "all_reduce", "all_to_all"})
    EXPECT_GT(seen[kind], 0u) << kind;
  // The 1F1B pipeline posts its sends on its groups' communicators, the interleaved one on pairs.
  EXPECT_FALSE(runs[1].output.built.schedule.send_comm.empty());
  EXPECT_TRUE(runs[3].output.built.schedule.send_comm.empty());
}

// The DDP run worked out by hand (tests/models/test_ddp.cpp): 4 ranks × 12 ops in 8 lanes, rank
// 2's last bucket all-reduce over [240, 240 + b2) us on all four ranks, b2 = 26 us + 1.5 × 0.6e6 B
// / (0.92 × 1e11 B/s) = 35.7826 us (NCCL's LL128 ring at 0.92 of the Simple ring's rate), the
// makespan 240 + b2 + 42 us (Adam) = 317.7826 us. Perfetto keeps whole nanoseconds (the writer
// drops the picoseconds): 275.782 and 317.782 us.
TEST(PerfettoReader, TheHandComputedDdpRunReadsBack) {
  const double b2_us = 26.0 + 1.5 * 0.6e6 / 0.92e11 * 1e6;
  const auto whole_ns_ps = [](double us) {
    return static_cast<std::int64_t>(std::floor(us * 1e3)) * 1000;
  };
  const Prediction p = run(kDdp, {});
  const TempFile file("ddp.pftrace");
  write_trace(p, file.path);
  const engine::TraceContents back = read_trace(file.path);
  const engine::Schedule& s = back.schedule;
  ASSERT_EQ(s.ops.size(), 48u);
  EXPECT_EQ(s.num_ranks, 4u);
  EXPECT_EQ(s.stream_names, (std::vector<std::string>{"compute", "comm"}));
  EXPECT_EQ(back.timeline.makespan.ps(), whole_ns_ps(240 + b2_us + 42));
  std::vector<engine::OpId> buckets;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == 2 && s.ops[id].kind == OpKind::collective) buckets.push_back(id);
  ASSERT_EQ(buckets.size(), 3u);
  const engine::OpId last = buckets.back();
  EXPECT_EQ(s.label(s.ops[last]), "ddp bucket 2 all_reduce");
  EXPECT_EQ(s.ops[last].category, engine::Category::dp_comm);
  EXPECT_EQ(s.ops[last].collective, engine::CollectiveType::all_reduce);
  EXPECT_EQ(s.groups[s.ops[last].group_or_peer].ranks, (std::vector<engine::Rank>{0, 1, 2, 3}));
  EXPECT_EQ(back.timeline.start[last].ps(), 240'000'000);
  EXPECT_EQ(back.timeline.end[last].ps(), whole_ns_ps(240 + b2_us));
}

// Tags reorder the pairs: rank 0 sends "a" (tag 1) then "b" (tag 0), rank 1 receives "b" then
// "a". The file keeps no tags, only the arrows, and they pair the ops as the tags did.
TEST(PerfettoReader, ArrowsPairSendsAndRecvsAsTheirTagsDid) {
  engine::ScheduleBuilder b(2);
  const engine::StreamId comm = b.stream("comm");
  const auto common = [&](engine::Rank rank, const char* name) {
    return engine::ScheduleBuilder::Common{
        .rank = rank, .stream = comm, .category = engine::Category::pp_comm, .name = name};
  };
  b.send(common(0, "send a"), 1, 64, 1);
  b.send(common(0, "send b"), 1, 64, 0);
  b.recv(common(1, "recv b"), 0, 64, 0);
  b.recv(common(1, "recv a"), 0, 64, 1);
  const engine::Schedule s = std::move(b).finish();
  engine::Timeline tl;
  for (std::int64_t k : {0, 1, 0, 1}) {
    tl.start.push_back(engine::Time::from_ps(k * 1'000'000));
    tl.end.push_back(engine::Time::from_ps((k + 1) * 1'000'000));
  }
  std::ostringstream out;
  write_perfetto_trace(out, s, tl, engine::Topology{});
  std::istringstream in(out.str());
  const engine::TraceContents back = read_perfetto_trace(in, "t.pftrace");
  ASSERT_EQ(back.schedule.ops.size(), 4u);
  const engine::Rendezvous got = engine::match_communication(back.schedule);
  EXPECT_EQ(partners(got, 0), (std::vector<engine::OpId>{0, 3}));  // send a, recv a
  EXPECT_EQ(partners(got, 1), (std::vector<engine::OpId>{1, 2}));  // send b, recv b
}

// What the reader says, or "" when it reads the bytes.
std::string error_of(const std::string& bytes, bool known_size = true) {
  std::istringstream in(bytes);
  engine::TraceReadOptions options;
  if (known_size) options.size_bytes = bytes.size();
  try {
    read_perfetto_trace(in, "t.pftrace", options);
  } catch (const engine::TraceError& e) {
    return e.what();
  }
  return "";
}

std::string serialized(const pb::Trace& trace) {
  std::string out;
  EXPECT_TRUE(trace.SerializeToString(&out));
  return out;
}

std::string deflated(const std::string& bytes) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::string out(size, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(out.data()), &size,
                     reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()),
            Z_OK);
  out.resize(size);
  return out;
}

// `n` zero bytes deflated a MiB at a time: a few hundred kilobytes.
std::string deflated_zeros(std::size_t n) {
  z_stream z{};
  EXPECT_EQ(deflateInit(&z, Z_BEST_SPEED), Z_OK);
  const std::string zeros(1u << 20, '\0');
  std::string out;
  char buffer[1 << 16];
  for (std::size_t left = n;;) {
    const std::size_t chunk = std::min(left, zeros.size());
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(chunk);
    left -= chunk;
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      rc = deflate(&z, flush);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
    if (left == 0) {
      EXPECT_EQ(rc, Z_STREAM_END);
      break;
    }
  }
  deflateEnd(&z);
  return out;
}

TEST(PerfettoReader, RefusesWhatIsNotSuchATraceNamingTheFile) {
  const Prediction p = run(kDdp, {});
  const TempFile file("good.pftrace");
  write_trace(p, file.path);
  std::ifstream in(file.path, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(error_of(good), "");

  struct Case {
    std::string name, bytes, message;
  };
  std::vector<Case> cases = {
      {"empty", "", "no slices"},
      {"a JSON trace", R"({"traceEvents":[]})", "not a Perfetto trace"},
      {"half", good.substr(0, good.size() / 2), "cut short"},
      {"all but the last byte", good.substr(0, good.size() - 1), "cut short"},
  };
  // A packet of a timestamp only: a valid trace with nothing of clustersim's.
  pb::Trace empty_packets;
  empty_packets.add_packet()->set_timestamp(5);
  cases.push_back({"no tracks", serialized(empty_packets), "no slices"});
  // A slice on a track no descriptor declared.
  pb::Trace undeclared;
  auto* stray = undeclared.add_packet()->mutable_track_event();
  stray->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
  stray->set_track_uuid(7);
  cases.push_back({"undeclared track", serialized(undeclared), "no track descriptor"});
  // A rank's stream whose slice has a name but no category (as clustersim wrote before it kept
  // them).
  pb::Trace uncategorized;
  auto* rank = uncategorized.add_packet()->mutable_track_descriptor();
  rank->set_uuid(1);
  rank->mutable_process()->set_pid(0);
  rank->mutable_process()->set_process_name("rank 0");
  auto* lane = uncategorized.add_packet()->mutable_track_descriptor();
  lane->set_uuid(2);
  lane->set_parent_uuid(1);
  lane->set_name("compute");
  auto* begin = uncategorized.add_packet();
  auto* name = begin->mutable_interned_data()->add_event_names();
  name->set_iid(1);
  name->set_name("L0 fwd");
  begin->mutable_track_event()->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
  begin->mutable_track_event()->set_track_uuid(2);
  begin->mutable_track_event()->set_name_iid(1);
  cases.push_back({"no category", serialized(uncategorized), "'L0 fwd' has no category"});
  // Compressed bundles that are damaged, nested, or that inflate without end.
  pb::Trace damaged;
  damaged.add_packet()->set_compressed_packets("not zlib at all");
  cases.push_back({"damaged bundle", serialized(damaged), "not a whole zlib stream"});
  pb::Trace cut_bundle;
  cut_bundle.add_packet()->set_compressed_packets(
      deflated(serialized(uncategorized)).substr(0, 20));
  cases.push_back({"cut bundle", serialized(cut_bundle), "not a whole zlib stream"});
  pb::Trace nested;
  nested.add_packet()->set_compressed_packets(deflated(serialized(damaged)));
  cases.push_back({"nested bundle", serialized(nested), "inside a compressed bundle"});
  pb::Trace bomb;
  bomb.add_packet()->set_compressed_packets(deflated_zeros(257u << 20));
  cases.push_back({"bundle past 256 MiB", serialized(bomb), "inflates past 256 MiB"});
  // A bundle inflates to packets read as if they stood in the file: the uncategorized slice's
  // error comes through it.
  pb::Trace wrapped;
  wrapped.add_packet()->set_compressed_packets(deflated(serialized(uncategorized)));
  cases.push_back({"bundled", serialized(wrapped), "'L0 fwd' has no category"});
  // Another message altogether: a TrackDescriptor alone (field 1 is a varint there).
  cases.push_back({"another message", rank->SerializeAsString(), "not a Perfetto trace"});
  std::mt19937 rng(12);
  for (int k = 0; k < 4; ++k) {
    std::string noise(1000 + 1000 * k, '\0');
    for (char& c : noise)
      c = static_cast<char>(rng());
    cases.push_back({"random bytes " + std::to_string(k), noise, ""});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string message = error_of(c.bytes);
    EXPECT_EQ(message.rfind("t.pftrace: ", 0), 0u) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
  // Every cut of the file is refused, with or without its size known, unless it keeps every
  // slice (it cuts the counters after them); none crashes, none loses an op unsaid.
  std::size_t refused = 0;
  for (std::size_t cut = 0; cut < good.size(); cut += 7) {
    for (const bool known_size : {true, false}) {
      std::istringstream part(good.substr(0, cut));
      engine::TraceReadOptions options;
      if (known_size) options.size_bytes = cut;
      try {
        EXPECT_EQ(read_perfetto_trace(part, "t.pftrace", options).schedule.ops.size(), 48u) << cut;
      } catch (const engine::TraceError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("t.pftrace: ", 0), 0u) << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, good.size() / 7);
}

// The front end reports "reading trace" up to 1 and stops when asked to.
TEST(PerfettoReader, ReportsProgressAndStopsWhenCancelled) {
  const Prediction p = run(kDdp, {});
  const TempFile file("progress.pftrace");
  write_trace(p, file.path);
  double last = -1;
  read_trace(file.path, [&](std::string_view phase, double f) {
    EXPECT_EQ(phase, "reading trace");
    last = f;
  });
  EXPECT_EQ(last, 1.0);
  const std::atomic<bool> cancel{true};
  EXPECT_THROW(read_trace(file.path, {}, &cancel), Cancelled);
}

}  // namespace
}  // namespace clustersim::models
