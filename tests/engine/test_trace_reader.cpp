// Reading back the Chrome trace write_trace() writes (engine/trace_reader.hpp): a hand-built run
// comes back op for op, and what is not such a trace is refused with the file and the reason.
#include <gtest/gtest.h>

#include <sstream>

#include "engine/network/transfer_plan.hpp"
#include "engine/trace.hpp"
#include "engine/trace_reader.hpp"

namespace clustersim::engine {
namespace {

Time us(double micros) {
  return Time::from_ps(static_cast<std::int64_t>(micros * 1e6));
}

TraceContents read_text(const std::string& text) {
  std::istringstream in(text);
  return read_trace(in, "t.json");
}

// The message read_text(text) throws, or "" when it reads.
std::string error_of(const std::string& text) {
  try {
    read_text(text);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// An X event on rank `pid`, stream 0, with `args`.
std::string op_event(int pid, const std::string& args, const std::string& cat = "forward") {
  return R"({"name":"op","cat":")" + cat + R"(","ph":"X","ts":1,"dur":2,"pid":)" +
         std::to_string(pid) + R"(,"tid":0,"args":)" + args + "}";
}

std::string trace_of(const std::string& events) {
  return R"({"traceEvents":[)" + events + R"(],"displayTimeUnit":"ns"})";
}

// Two ranks, streams "compute" and "comm": rank 0 runs "L0 fwd" of micro-batch 3 (2e9 FLOPs)
// over [0, 1.5) us, then both all-reduce 1,000 bytes on group "dp[0]" over [1.5, 4.25) us (ring,
// LL128, 2 channels, bucket 2); rank 0 sends 64 bytes (tag 7) to rank 1 over [4.25, 5) us.
TEST(TraceReader, ReadsBackWhatWriteTraceWrote) {
  ScheduleBuilder b(2);
  const StreamId compute = b.stream("compute");
  const StreamId comm = b.stream("comm");
  const GroupId dp = b.add_group({0, 1}, "dp[0]");
  b.compute({.rank = 0, .stream = compute, .name = "L0 fwd", .microbatch = 3}, 2e9, 512);
  for (Rank r = 0; r < 2; ++r)
    b.collective(
        {.rank = r, .stream = comm, .category = Category::dp_comm, .name = "ar", .chunk = 2},
        CollectiveType::all_reduce, dp, 1000);
  b.send({.rank = 0, .stream = comm, .category = Category::pp_comm, .name = "send"}, 1, 64, 7);
  b.recv({.rank = 1, .stream = comm, .category = Category::pp_comm, .name = "recv"}, 0, 64, 7);
  const Schedule s = std::move(b).finish();
  Timeline tl;
  tl.start = {us(0), us(1.5), us(1.5), us(4.25), us(4.25)};
  tl.end = {us(1.5), us(4.25), us(4.25), us(5), us(5)};
  tl.launch = tl.start;
  tl.algorithm = {Algorithm::automatic, Algorithm::ring, Algorithm::ring, Algorithm::direct,
                  Algorithm::direct};
  tl.protocol = {Protocol::simple, Protocol::ll128, Protocol::ll128, Protocol::simple,
                 Protocol::simple};
  tl.channels = {0, 2, 2, 1, 1};
  std::ostringstream out;
  write_trace(out, s, tl, Topology{});

  const TraceContents back = read_text(out.str());
  const Schedule& r = back.schedule;
  ASSERT_EQ(r.ops.size(), 5u);
  EXPECT_EQ(r.num_ranks, 2u);  // the "network" process is pid 2
  EXPECT_EQ(r.stream_names, (std::vector<std::string>{"compute", "comm"}));
  const Op& fwd = r.ops[0];
  EXPECT_EQ(r.label(fwd), "L0 fwd mb3");
  EXPECT_EQ(r.name_of(fwd), "L0 fwd");
  EXPECT_EQ(fwd.microbatch(), 3u);
  EXPECT_EQ(fwd.kind, OpKind::compute);
  EXPECT_EQ(fwd.category, Category::forward);
  EXPECT_EQ(r.flops(fwd), 2e9);
  EXPECT_EQ(r.flop_values, std::vector<double>{2e9});  // only the compute op has FLOPs to intern
  EXPECT_EQ(fwd.bytes, 512u);
  EXPECT_EQ(back.timeline.start[0].ps(), 0);
  EXPECT_EQ(back.timeline.end[0].ps(), 1'500'000);

  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].name, "dp[0]");
  EXPECT_EQ(r.groups[0].ranks, (std::vector<Rank>{0, 1}));
  for (OpId id : {1u, 2u}) {
    const Op& ar = r.ops[id];
    EXPECT_EQ(ar.rank, id - 1);
    EXPECT_EQ(ar.stream, 1u);
    EXPECT_EQ(ar.kind, OpKind::collective);
    EXPECT_EQ(ar.category, Category::dp_comm);
    EXPECT_EQ(ar.collective, CollectiveType::all_reduce);
    EXPECT_EQ(ar.group_or_peer, 0u);
    EXPECT_EQ(ar.bytes, 1000u);
    EXPECT_EQ(ar.chunk(), 2u);
    EXPECT_EQ(back.timeline.algorithm[id], Algorithm::ring);
    EXPECT_EQ(back.timeline.protocol[id], Protocol::ll128);
    EXPECT_EQ(back.timeline.channels[id], 2u);
    EXPECT_EQ(back.timeline.start[id].ps(), 1'500'000);
    EXPECT_EQ(back.timeline.end[id].ps(), 4'250'000);
  }
  EXPECT_EQ(r.ops[3].kind, OpKind::send);
  EXPECT_EQ(r.ops[3].group_or_peer, 1u);
  EXPECT_EQ(r.ops[3].tag(), 7u);
  EXPECT_EQ(r.ops[4].kind, OpKind::recv);
  EXPECT_EQ(r.ops[4].group_or_peer, 0u);
  EXPECT_EQ(r.ops[4].category, Category::pp_comm);
  EXPECT_EQ(back.timeline.end[4].ps(), 5'000'000);
  EXPECT_EQ(back.timeline.launch[4].ps(), 4'250'000);  // no waiting time in a trace
  EXPECT_EQ(back.timeline.makespan.ps(), 5'000'000);
}

// A send and its recv posted on a group's communicator (ScheduleBuilder::post_sends_on) carry the
// group's name as `comm`; a send on a communicator of its pair carries none. Reading back posts
// them on that group again, so a trace read back plans its sends as the run did.
TEST(TraceReader, ASendPostedOnAGroupsCommunicatorNamesIt) {
  ScheduleBuilder b(3);
  const StreamId comm = b.stream("comm");
  b.post_sends_on(b.add_group({0, 1}, "pp[0]"));
  b.send({.rank = 0, .stream = comm, .name = "on group"}, 1, 64, 1);
  b.recv({.rank = 1, .stream = comm, .name = "on group"}, 0, 64, 1);
  b.send({.rank = 1, .stream = comm, .name = "on pair"}, 2, 64, 2);
  b.recv({.rank = 2, .stream = comm, .name = "on pair"}, 1, 64, 2);
  const Schedule s = std::move(b).finish();
  Timeline tl;
  tl.start = {us(0), us(0), us(1), us(1)};
  tl.end = {us(1), us(1), us(2), us(2)};
  tl.launch = tl.start;
  tl.algorithm.assign(4, Algorithm::direct);
  std::ostringstream out;
  write_trace(out, s, tl, Topology{});
  const std::string text = out.str();
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(R"("comm":"pp[0]")"), 2u) << text;
  EXPECT_EQ(count(R"("comm":)"), 2u) << text;  // none on the pair's send and recv
  const Schedule back = read_text(text).schedule;
  ASSERT_EQ(back.ops.size(), 4u);
  ASSERT_NE(back.send_group(0, 1), kNone);
  EXPECT_EQ(back.groups[back.send_group(0, 1)].name, "pp[0]");
  EXPECT_EQ(back.groups[back.send_group(0, 1)].ranks, (std::vector<Rank>{0, 1}));
  EXPECT_EQ(back.send_group(1, 2), kNone);
  // A rank whose sends name two groups is not a trace clustersim wrote.
  std::string two = text;  // rank 1's send to rank 2 names another group
  two.replace(two.find(R"("to":2)"), 6, R"("to":2,"comm":"pp[9]")");
  EXPECT_NE(error_of(two).find("rank 1 posts sends on 'pp[0]' and on 'pp[9]'"), std::string::npos)
      << error_of(two);
}

TEST(TraceReader, RefusesWhatIsNotSuchATrace) {
  struct Case {
    std::string text;
    std::string message;  // what the error says after "t.json: "
  };
  const std::vector<Case> cases = {
      {R"({"traceEvents":[)", "not valid JSON at byte 17: line 1, column 17: syntax error"},
      {"{\"traceEvents\":[\n{\"ph\":\"X\",}]}",
       "not valid JSON at byte 28: line 2, column 11: syntax error"},
      {R"({"traceEvents":[{"ts":1e400}]})", "not valid JSON"},  // past a double (fuzzing)
      {"[]", "a JSON array; expected the object"},
      {R"({"events":[]})", "not a Chrome trace"},
      {R"({"traceEvents":{}})", "not a Chrome trace"},
      {trace_of("1"), "traceEvents[0]: expected an object"},
      {trace_of(R"({"name":"x"})"), "traceEvents[0].ph: missing key"},
      {trace_of(R"({"ph":"X","name":"op","cat":"forward","ts":1,"dur":"2","pid":0,"tid":0})"),
       "traceEvents[0].dur: expected a number"},
      {trace_of(R"({"ph":"X","name":"op","cat":"forward","ts":1,"dur":-2,"pid":0,"tid":0})"),
       "traceEvents[0].dur: expected a duration >= 0"},
      {trace_of(R"({"ph":"X","name":"op","cat":"forward","ts":1,"dur":2,"tid":0})"),
       "traceEvents[0].pid: missing key"},
      {trace_of(op_event(0, "{}") + "," + op_event(0, "{}", "kernel")),
       "traceEvents[1].cat: 'kernel' is not one of forward, backward"},
      {trace_of(op_event(0, R"({"kind":"collective","collective":"all_reduce"})")),
       "traceEvents[0].args.group: missing key"},
      {trace_of(op_event(0, R"({"kind":"gemm"})")), "traceEvents[0].args.kind: 'gemm'"},
      {trace_of(op_event(0, R"({"kind":"send","tag":1})")), "traceEvents[0].args.to: missing key"},
      {trace_of(op_event(0, R"({"kind":"send","to":0})")), "schedule: send 'op' to invalid peer 0"},
      {trace_of(R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"network"}},)" +
                op_event(1, "{}")),
       "an op on pid 1, which is not below the \"network\" process's pid 1"},
      {trace_of(R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"rank 0"}})"), "no ops"},
      // An op's micro-batch and chunk are 16 bits, one value of which is "none" (Op::kMaxIndex).
      {trace_of(op_event(0, R"({"microbatch":65535})")),
       "op 'op' on rank 0 has micro-batch 65535 and chunk none; an op's micro-batch and chunk "
       "are at most 65534"},
      {trace_of(op_event(0, R"({"chunk":65535})")),
       "op 'op' on rank 0 has micro-batch none and chunk 65535"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.text);
    EXPECT_EQ(message.rfind("t.json: ", 0), 0u) << c.text << " -> " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.text << " -> " << message;
  }
}

// The largest micro-batch and chunk an op holds (65,534 each) read back exactly.
TEST(TraceReader, ReadsTheLargestMicroBatchAndChunk) {
  const TraceContents t = read_text(trace_of(op_event(0, R"({"microbatch":65534,"chunk":65534})")));
  ASSERT_EQ(t.schedule.ops.size(), 1u);
  EXPECT_EQ(t.schedule.ops[0].microbatch(), 65'534u);
  EXPECT_EQ(t.schedule.ops[0].chunk(), 65'534u);
}

}  // namespace
}  // namespace clustersim::engine
