// The event loop's semantics on hand-computed timelines: FIFO streams, overlap across streams,
// dependencies, collectives that wait for every member, send/recv matching, and the errors a
// broken schedule must produce. A fake network (every transfer takes bytes / 1 GB/s) and a fake
// compute model (1 TFLOP/s, no overhead) keep the arithmetic exact (fake_models.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/simulator.hpp"
#include "tests/engine/fake_models.hpp"

namespace clustersim::engine {
namespace {

using namespace fakes;

using Fixture = SimulatorFixture<OneTeraflop>;

TEST_F(Fixture, OpsOnOneStreamRunInIssueOrder) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  const OpId a = b.compute({0, s0, Category::forward, "a"}, 1e12, 0);  // 1 s
  const OpId c = b.compute({0, s0, Category::forward, "b"}, 2e12, 0);  // 2 s, no dependency
  const auto tl = run(std::move(b).finish(), 1);
  EXPECT_DOUBLE_EQ(sec(tl.start[a]), 0.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[a]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[c]), 1.0);  // FIFO: waits for a although independent
  EXPECT_DOUBLE_EQ(sec(tl.makespan), 3.0);
}

TEST_F(Fixture, StreamsOfOneRankOverlapUnlessDependent) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  const auto s1 = b.stream("copy");
  const OpId a = b.compute({0, s0, Category::forward, "a"}, 2e12, 0);     // [0, 2]
  const OpId c = b.copy({0, s1, Category::forward, "c"}, 1'000'000'000);  // [0, 1], independent
  const OpId deps[] = {a};
  const OpId d = b.copy({0, s1, Category::forward, "d", kNone, deps}, 500'000'000);  // after a
  const auto tl = run(std::move(b).finish(), 1);
  EXPECT_DOUBLE_EQ(sec(tl.start[c]), 0.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[c]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[d]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[d]), 2.5);
  EXPECT_DOUBLE_EQ(sec(tl.makespan), 2.5);
}

TEST_F(Fixture, CollectiveStartsWhenTheLastMemberArrives) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const GroupId g = b.add_group({0, 1}, "dp");
  const OpId c0 = b.compute({0, s0, Category::backward, "bwd"}, 1e12, 0);  // rank 0 ready at 1 s
  const OpId c1 = b.compute({1, s0, Category::backward, "bwd"}, 3e12, 0);  // rank 1 ready at 3 s
  const OpId ar0 = b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g,
                                2'000'000'000);  // 2 s on the fixed network
  const OpId ar1 =
      b.collective({1, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 2'000'000'000);
  const auto tl = run(std::move(b).finish());
  EXPECT_DOUBLE_EQ(sec(tl.end[c0]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[c1]), 3.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[ar0]), 1.0);   // rank 0 posts at 1 s and waits on its stream
  EXPECT_DOUBLE_EQ(sec(tl.launch[ar0]), 3.0);  // the transfer begins with the last member
  EXPECT_DOUBLE_EQ(sec(tl.end[ar0]), 5.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ar1]), 5.0);
  EXPECT_EQ(network.started, 1);  // one transfer for the whole group
}

// The simulator keeps a transfer's launch, end and plan per instance and writes every member's
// timeline entries after the run: each member gets its own instance's figures, compute ops
// launch when they start and end a duration later, with no algorithm, protocol or channels.
TEST_F(Fixture, EveryMemberGetsItsOwnInstancesLaunchEndAndAlgorithm) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const GroupId g = b.add_group({0, 1}, "dp");
  const OpId c0 = b.compute({0, s0, Category::backward, "bwd"}, 1e12, 0);  // rank 0 ready at 1 s
  const OpId c1 = b.compute({1, s0, Category::backward, "bwd"}, 2e12, 0);  // rank 1 at 2 s
  // A ring all-reduce of 1 GB (2 to 3 s), then a 2 GB send/recv (3 to 5 s).
  const OpId ar0 = b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g,
                                1'000'000'000, Algorithm::ring);
  const OpId ar1 = b.collective({1, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g,
                                1'000'000'000, Algorithm::ring);
  const OpId send = b.send({0, s0, Category::pp_comm, "send"}, 1, 2'000'000'000, 3);
  const OpId recv = b.recv({1, s0, Category::pp_comm, "recv"}, 0, 2'000'000'000, 3);
  const auto tl = run(std::move(b).finish());
  for (const OpId c : {c0, c1}) {
    EXPECT_EQ(tl.launch[c], tl.start[c]);
    EXPECT_EQ(tl.algorithm[c], Algorithm::automatic);
    EXPECT_EQ(tl.protocol[c], Protocol::simple);
    EXPECT_EQ(tl.channels[c], 0u);
  }
  EXPECT_DOUBLE_EQ(sec(tl.end[c0]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[c1]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[ar0]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[ar1]), 2.0);
  for (const OpId a : {ar0, ar1}) {
    EXPECT_DOUBLE_EQ(sec(tl.launch[a]), 2.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[a]), 3.0);
    EXPECT_EQ(tl.algorithm[a], Algorithm::ring);
    EXPECT_GE(tl.channels[a], 1u);
  }
  EXPECT_EQ(tl.protocol[ar0], tl.protocol[ar1]);
  EXPECT_EQ(tl.channels[ar0], tl.channels[ar1]);
  for (const OpId p : {send, recv}) {
    EXPECT_DOUBLE_EQ(sec(tl.launch[p]), 3.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[p]), 5.0);
    EXPECT_EQ(tl.algorithm[p], Algorithm::direct);
  }
}

// Without recorded starts (SimulationOptions::record_starts false) the timeline has none, and
// every other field is as the hand-computed run above has it: compute launches when it starts,
// the collective when its last member arrives.
TEST_F(Fixture, WithoutRecordedStartsLaunchesAndEndsAreTheSame) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const GroupId g = b.add_group({0, 1}, "dp");
  const OpId c0 = b.compute({0, s0, Category::backward, "bwd"}, 1e12, 0);  // [0, 1] s
  const OpId c1 = b.compute({1, s0, Category::backward, "bwd"}, 3e12, 0);  // [0, 3] s
  const OpId ar0 =
      b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 2'000'000'000);
  const OpId ar1 =
      b.collective({1, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 2'000'000'000);
  SimulationOptions options;
  options.record_starts = false;
  const auto tl = run(std::move(b).finish(), 2, options);
  EXPECT_TRUE(tl.start.empty());
  EXPECT_DOUBLE_EQ(sec(tl.launch[c0]), 0.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[c0]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.launch[c1]), 0.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[c1]), 3.0);
  for (const OpId a : {ar0, ar1}) {
    EXPECT_DOUBLE_EQ(sec(tl.launch[a]), 3.0);
    EXPECT_DOUBLE_EQ(sec(tl.end[a]), 5.0);
  }
  EXPECT_DOUBLE_EQ(sec(tl.makespan), 5.0);
}

// An op's successors are listed up to its own last one, whichever op ended first: here the op
// after `slow` in issue order (`fast`) ends 2 s before it, and each waiter starts exactly when
// its own dependency ends.
TEST_F(Fixture, EachOpWakesOnlyItsOwnSuccessorsWhateverEndsFirst) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("a");
  const auto s1 = b.stream("b");
  const auto s2 = b.stream("c");
  const auto s3 = b.stream("d");
  const OpId slow = b.compute({0, s0, Category::forward, "slow"}, 3e12, 0);  // [0, 3] s
  const OpId fast = b.compute({0, s1, Category::forward, "fast"}, 1e12, 0);  // [0, 1] s
  const OpId after_slow[] = {slow};
  const OpId after_fast[] = {fast};
  const OpId both[] = {slow, fast};
  const OpId w1 = b.compute({0, s2, Category::forward, "w1", kNone, after_slow}, 1e12, 0);
  const OpId w2 = b.compute({0, s3, Category::forward, "w2", kNone, after_fast}, 1e12, 0);
  const OpId w3 = b.compute({0, s3, Category::forward, "w3", kNone, both}, 1e12, 0);
  const auto tl = run(std::move(b).finish(), 1);
  EXPECT_DOUBLE_EQ(sec(tl.start[w1]), 3.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[w2]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[w2]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[w3]), 3.0);  // waits for slow although w2 ended at 2 s
  EXPECT_DOUBLE_EQ(sec(tl.end[w3]), 4.0);
  EXPECT_DOUBLE_EQ(sec(tl.makespan), 4.0);
}

// Folding: ranks 2 and 3 mirror ranks 0 and 1 and issue nothing. The all-reduce on {0, 2}
// starts when rank 0 (its only simulated member) arrives, and costs one transfer for the group.
TEST_F(Fixture, AFoldedCollectiveWaitsOnlyForItsSimulatedMembers) {
  ScheduleBuilder b(4);
  b.fold({0, 1, 0, 1});
  const auto s0 = b.stream("compute");
  const GroupId g0 = b.add_group({0, 2}, "dp[0]");
  const GroupId g1 = b.add_group({1, 3}, "dp[1]");
  b.compute({0, s0, Category::backward, "bwd"}, 1e12, 0);  // rank 0 ready at 1 s
  b.compute({1, s0, Category::backward, "bwd"}, 3e12, 0);  // rank 1 ready at 3 s
  const OpId ar0 =
      b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g0, 2'000'000'000);
  const OpId ar1 =
      b.collective({1, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g1, 2'000'000'000);
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.simulated_ranks(), 2u);
  EXPECT_FALSE(s.simulated(3));
  const auto tl = run(s, 4);
  EXPECT_DOUBLE_EQ(sec(tl.launch[ar0]), 1.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ar0]), 3.0);
  EXPECT_DOUBLE_EQ(sec(tl.launch[ar1]), 3.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ar1]), 5.0);
  EXPECT_EQ(network.started, 2);
}

TEST(ScheduleBuilder, AFoldedRankIssuesNothingAndMirrorsASimulatedRank) {
  ScheduleBuilder b(4);
  EXPECT_THROW(b.fold({0, 1, 0}), std::invalid_argument);     // not every rank
  EXPECT_THROW(b.fold({0, 0, 1, 2}), std::invalid_argument);  // rank 2 mirrors folded rank 1
  b.fold({0, 1, 0, 1});
  const auto s0 = b.stream("compute");
  EXPECT_THROW(b.compute({2, s0, Category::forward, "f"}, 1.0, 0), std::invalid_argument);
  b.compute({1, s0, Category::forward, "f"}, 1.0, 0);
  EXPECT_THROW(b.fold({0, 1, 2, 3}), std::invalid_argument);  // after the first op
}

TEST_F(Fixture, NthCollectiveOnAGroupMatchesTheNthOfEveryMember) {
  // Both ranks issue two all-reduces of different sizes on the same group; rank 1 issues them
  // late. Call k of rank 0 must pair with call k of rank 1: 1 GB (1 s) then 3 GB (3 s).
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const GroupId g = b.add_group({0, 1}, "dp");
  const OpId a0 =
      b.collective({0, s0, Category::dp_comm, "a"}, CollectiveType::all_reduce, g, 1'000'000'000);
  const OpId b0 =
      b.collective({0, s0, Category::dp_comm, "b"}, CollectiveType::all_reduce, g, 3'000'000'000);
  b.compute({1, s0, Category::forward, "late"}, 2e12, 0);
  b.collective({1, s0, Category::dp_comm, "a"}, CollectiveType::all_reduce, g, 1'000'000'000);
  b.collective({1, s0, Category::dp_comm, "b"}, CollectiveType::all_reduce, g, 3'000'000'000);
  const auto tl = run(std::move(b).finish());
  EXPECT_DOUBLE_EQ(sec(tl.end[a0]), 3.0);  // 2 s late start + 1 s
  EXPECT_DOUBLE_EQ(sec(tl.end[b0]), 6.0);  // then 3 s
}

TEST_F(Fixture, SendMatchesRecvByPeerAndTag) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const auto s1 = b.stream("p2p");
  const OpId work = b.compute({0, s0, Category::forward, "fwd"}, 1e12, 0);
  const OpId deps[] = {work};
  // Rank 0 sends tag 7 then tag 9; rank 1 posts its receives the other way round on two streams.
  const OpId send7 = b.send({0, s0, Category::pp_comm, "send act", 0, deps}, 1, 1'000'000'000, 7);
  const OpId send9 = b.send({0, s0, Category::pp_comm, "send act", 1}, 1, 2'000'000'000, 9);
  const OpId recv9 = b.recv({1, s1, Category::pp_comm, "recv act", 1}, 0, 2'000'000'000, 9);
  const OpId recv7 = b.recv({1, s0, Category::pp_comm, "recv act", 0}, 0, 1'000'000'000, 7);
  const auto tl = run(std::move(b).finish());
  EXPECT_DOUBLE_EQ(sec(tl.end[send7]), 2.0);  // 1 s compute + 1 GB
  EXPECT_DOUBLE_EQ(sec(tl.end[recv7]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.launch[send9]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[send9]), 4.0);  // then 2 GB
  EXPECT_DOUBLE_EQ(sec(tl.end[recv9]), 4.0);
  EXPECT_DOUBLE_EQ(sec(tl.start[recv9]), 0.0);  // posted at once, waited for the sender
}

TEST_F(Fixture, MismatchedCollectivesAreErrors) {
  {
    ScheduleBuilder b(2);
    const auto s0 = b.stream("compute");
    const GroupId g = b.add_group({0, 1}, "dp");
    b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 100);
    EXPECT_THROW(run(std::move(b).finish()), SimulationError);  // rank 1 never issues it
  }
  {
    ScheduleBuilder b(2);
    const auto s0 = b.stream("compute");
    const GroupId g = b.add_group({0, 1}, "dp");
    b.collective({0, s0, Category::dp_comm, "ar"}, CollectiveType::all_reduce, g, 100);
    b.collective({1, s0, Category::dp_comm, "ag"}, CollectiveType::all_gather, g, 100);
    try {
      run(std::move(b).finish());
      FAIL() << "expected a mismatch";
    } catch (const SimulationError& e) {
      EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
    }
  }
  {
    ScheduleBuilder b(2);
    const auto s0 = b.stream("compute");
    b.send({0, s0, Category::pp_comm, "send"}, 1, 100, 3);
    b.recv({1, s0, Category::pp_comm, "recv"}, 0, 100, 4);  // wrong tag
    EXPECT_THROW(run(std::move(b).finish()), SimulationError);
  }
}

// Two ranks issue two collectives in opposite orders: each waits in its first for the other.
// Rank 0 also has `side_streams` streams whose op waits for its second collective.
// Fixture::run on the schedule; returns the SimulationError's message ("" if none was thrown).
std::string crossed_collectives_error(Fixture& f, int side_streams) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const GroupId g1 = b.add_group({0, 1}, "g1");
  const GroupId g2 = b.add_group({0, 1}, "g2");
  b.collective({0, s0, Category::dp_comm, "first"}, CollectiveType::all_reduce, g1, 100);
  const OpId after[] = {
      b.collective({0, s0, Category::dp_comm, "second"}, CollectiveType::all_reduce, g2, 100)};
  for (int k = 0; k < side_streams; ++k) {
    const std::string name = "side " + std::to_string(k);
    b.compute({0, b.stream(name), Category::forward, "waits", kNone, after}, 1e9, 0);
  }
  b.collective({1, s0, Category::dp_comm, "second"}, CollectiveType::all_reduce, g2, 100);
  b.collective({1, s0, Category::dp_comm, "first"}, CollectiveType::all_reduce, g1, 100);
  try {
    f.run(std::move(b).finish());
  } catch (const SimulationError& e) {
    return e.what();
  }
  return "";
}

TEST_F(Fixture, CrossedCollectivesDeadlockWithADiagnosis) {
  const std::string msg = crossed_collectives_error(*this, 0);
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 of 2 peers arrived"), std::string::npos) << msg;
}

// A deadlock spans ranks: the report lists each rank's first blocked stream before any rank's
// others, so that rank 1 shows even when rank 0 has fourteen blocked streams, and counts what it
// leaves out beyond twelve lines.
TEST_F(Fixture, ADeadlockReportShowsEveryRanksEnd) {
  const std::string msg = crossed_collectives_error(*this, 13);
  EXPECT_NE(msg.find("rank 1 stream 'compute' at 'second': 1 of 2 peers arrived"),
            std::string::npos)
      << msg;
  // 15 blocked streams: rank 0's compute and 13 side streams, rank 1's compute; 12 shown.
  EXPECT_NE(msg.find("and 3 more blocked streams"), std::string::npos) << msg;
}

TEST_F(Fixture, ScheduleLargerThanTopologyIsAnError) {
  ScheduleBuilder b(4);
  const auto s0 = b.stream("compute");
  b.compute({3, s0, Category::forward, "x"}, 1, 0);
  EXPECT_THROW(run(std::move(b).finish(), 2), SimulationError);
}

TEST(ScheduleBuilder, RejectsDependenciesOnOtherRanksAndLaterOps) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const OpId a = b.compute({0, s0, Category::forward, "a"}, 1, 0);
  const OpId other_rank[] = {a};
  EXPECT_THROW(b.compute({1, s0, Category::forward, "b", kNone, other_rank}, 1, 0),
               std::invalid_argument);
  const OpId future[] = {a + 5};
  EXPECT_THROW(b.compute({0, s0, Category::forward, "c", kNone, future}, 1, 0),
               std::invalid_argument);
  EXPECT_THROW(b.add_group({0, 0}, "dup"), std::invalid_argument);
  EXPECT_THROW(b.add_group({0, 2}, "out of range"), std::invalid_argument);
}

// A model that costs kernel lists: list i lasts i + 1 seconds, whatever its kernels; it counts
// how often it was asked, to show that costing is per list, not per op.
class CountedLists : public OneTeraflop {
 public:
  std::vector<Time> kernel_list_durations(const KernelTable& table) const override {
    ++calls;
    std::vector<Time> out;
    for (std::size_t i = 0; i < table.size(); ++i)
      out.push_back(Time::from_seconds(static_cast<double>(i + 1)));
    return out;
  }
  mutable int calls = 0;
};

// Interning checks the name after the last one interned before hashing: whichever way a name is
// found, it keeps the index it got when first seen (first-seen order: a = 0, b = 1, c = 2).
TEST(ScheduleBuilder, InternedNamesKeepTheirFirstIndexInAnyOrder) {
  ScheduleBuilder b(1);
  const char* sequence[] = {"a", "b", "c", "a", "b", "c", "c", "b", "a", "a", "c", "b", "d"};
  const std::uint32_t want[] = {0, 1, 2, 0, 1, 2, 2, 1, 0, 0, 2, 1, 3};
  for (std::size_t i = 0; i < std::size(sequence); ++i)
    EXPECT_EQ(b.intern(sequence[i]), want[i]) << "name " << i << ": " << sequence[i];
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.names, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ScheduleBuilder, ComputeOpsNameKernelListsOfTheSchedulesTable) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  Kernel k;
  k.kind = KernelKind::memory;
  k.bytes = 1e6;
  const std::uint32_t list = b.kernel_table().intern(std::vector<Kernel>{k});
  const OpId with = b.compute({0, s0, Category::forward, "a"}, 1, 0, 0, list);
  const OpId without = b.compute({0, s0, Category::forward, "b"}, 1, 0);
  EXPECT_THROW(b.compute({0, s0, Category::forward, "c"}, 1, 0, 0, list + 1),
               std::invalid_argument);
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.ops[with].kernels, list);
  EXPECT_EQ(s.ops[without].kernels, kNone);
  EXPECT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels.list(list).front().bytes, 1e6);
  static_assert(sizeof(Op) == 40, "kernels share their four bytes with group_or_peer");
}

// A compute op holds an index into Schedule::flop_values, not its FLOPs: ops of equal FLOPs
// share one entry, entries appear in the order first seen, every count reads back exactly (by
// its bits: 0.1 + 0.2 is not 0.3, -0.0 is not 0.0), and other kinds add none and read 0 FLOPs.
TEST(ScheduleBuilder, ComputeOpsOfEqualFlopsShareOneEntryOfTheFlopTable) {
  ScheduleBuilder b(2);
  const auto s0 = b.stream("compute");
  const OpId a = b.compute({0, s0, Category::forward, "a"}, 2e9, 0);
  const OpId copy = b.copy({0, s0, Category::forward, "c"}, 10, CopyDirection::to_host);
  const OpId big = b.compute({0, s0, Category::backward, "b"}, 4e9, 0);
  const OpId again = b.compute({1, s0, Category::forward, "a"}, 2e9, 0);
  const OpId sum = b.compute({1, s0, Category::forward, "s"}, 0.1 + 0.2, 0);
  const OpId zero = b.compute({1, s0, Category::forward, "z"}, 0.0, 0);
  const OpId minus_zero = b.compute({1, s0, Category::forward, "m"}, -0.0, 0);
  const OpId big_again = b.compute({1, s0, Category::backward, "b"}, 4e9, 0);
  const Schedule s = std::move(b).finish();
  ASSERT_EQ(s.flop_values.size(), 5u);  // 2e9, 4e9, 0.1 + 0.2, 0.0, -0.0
  EXPECT_EQ(s.ops[a].flop_index(), 0u);
  EXPECT_EQ(s.ops[big].flop_index(), 1u);
  EXPECT_EQ(s.ops[again].flop_index(), 0u);
  EXPECT_EQ(s.ops[sum].flop_index(), 2u);
  EXPECT_EQ(s.ops[zero].flop_index(), 3u);
  EXPECT_EQ(s.ops[minus_zero].flop_index(), 4u);
  EXPECT_EQ(s.ops[big_again].flop_index(), 1u);
  EXPECT_EQ(s.flops(s.ops[again]), 2e9);
  EXPECT_EQ(s.flops(s.ops[big_again]), 4e9);
  EXPECT_EQ(s.flops(s.ops[sum]), 0.30000000000000004);
  EXPECT_FALSE(std::signbit(s.flops(s.ops[zero])));
  EXPECT_TRUE(std::signbit(s.flops(s.ops[minus_zero])));
  EXPECT_EQ(s.flops(s.ops[copy]), 0.0);
  EXPECT_EQ(s.ops[copy].tag(),
            1u);  // CopyDirection::to_host, in the bytes a compute op's index uses
  EXPECT_EQ(s.ops[a].tag(), 0u);
}

// Op::deps_count is 16 bits: an op may name 2^16 - 1 = 65,535 dependencies. One more is refused,
// with the op named, and nothing is added: never a count cut short.
TEST(ScheduleBuilder, AnOpNamesAtMost65535DependenciesAndOneMoreIsRefusedByName) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  std::vector<OpId> deps;
  for (int i = 0; i < 65'536; ++i)
    deps.push_back(b.compute({0, s0, Category::forward, "w"}, 1, 0));
  const std::span<const OpId> all(deps);
  const OpId widest = b.compute({0, s0, Category::forward, "join", kNone, all.first(65'535)}, 1, 0);
  try {
    b.compute({0, s0, Category::forward, "too wide", kNone, all}, 1, 0);
    FAIL() << "an op with 65,536 dependencies was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'too wide'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("65536"), std::string::npos) << e.what();
  }
  const Schedule s = std::move(b).finish();
  EXPECT_EQ(s.ops.size(), 65'537u);
  const auto kept = s.dependencies(s.ops[widest]);
  ASSERT_EQ(kept.size(), 65'535u);
  EXPECT_EQ(kept.front(), deps.front());
  EXPECT_EQ(kept.back(), deps[65'534]);
}

// An op keeps its micro-batch and its chunk in 16 bits each, one value of which stands for "none":
// 2^16 - 2 = 65,534 is the largest index either may be. It comes back exactly; one more is an
// error naming the op, never a cut index.
TEST(ScheduleBuilder, AnOpsMicroBatchAndChunkAreAtMost65534AndOneMoreIsRefusedByName) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  const OpId last = b.compute(
      {.rank = 0, .stream = s0, .name = "last", .microbatch = 65'534, .chunk = 65'534}, 1, 0);
  const OpId none = b.compute({.rank = 0, .stream = s0, .name = "none"}, 1, 0);
  for (const bool chunk : {false, true}) {
    try {
      ScheduleBuilder::Common c{.rank = 0, .stream = s0, .name = "one more"};
      (chunk ? c.chunk : c.microbatch) = 65'535;
      b.compute(c, 1, 0);
      FAIL() << (chunk ? "chunk" : "micro-batch") << " 65,535 was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'one more'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(chunk ? "chunk 65535" : "micro-batch 65535"),
                std::string::npos)
          << e.what();
    }
  }
  const Schedule s = std::move(b).finish();
  ASSERT_EQ(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[last].microbatch(), 65'534u);
  EXPECT_EQ(s.ops[last].chunk(), 65'534u);
  EXPECT_EQ(s.ops[none].microbatch(), kNone);
  EXPECT_EQ(s.ops[none].chunk(), kNone);
  EXPECT_EQ(s.label(s.ops[last]), "last mb65534");
}

// The loop keeps an op's unfinished dependencies in the word that holds its stream's index. With
// 32,769 ranks of 2 streams (65,538 streams: a 17-bit index) and one bit for GPU work, 14 bits
// are left: 2^14 - 1 = 16,383 dependencies. One more is an error naming the op.
TEST(Simulator, MoreDependenciesThanTheLoopCountsBesideTheStreamNameTheOp) {
  const auto joined_after = [](int n) {
    ScheduleBuilder b(32'769);
    const auto s0 = b.stream("compute");
    b.stream("comm");
    std::vector<OpId> deps;
    for (int i = 0; i < n; ++i)
      deps.push_back(b.compute({0, s0, Category::forward, "w"}, 1e9, 0));  // 1 ms each
    b.compute({0, s0, Category::forward, "join", kNone, deps}, 1e12, 0);   // 1 s
    return std::move(b).finish();
  };
  const Topology topology = gpus_on_a_switch(32'769);
  FixedRateNetwork network;
  const OneTeraflop compute;
  EXPECT_NEAR(sec(simulate(joined_after(16'383), topology, network, compute).makespan),
              16'383 * 1e-3 + 1.0, 1e-9);
  try {
    simulate(joined_after(16'384), topology, network, compute);
    FAIL() << "an op with 16,384 dependencies ran";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("'join'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16383"), std::string::npos) << e.what();
  }
}

TEST_F(Fixture, OpsWithAKernelListTakeItsCostedDuration) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  Kernel k;
  k.kind = KernelKind::memory;
  auto& table = b.kernel_table();
  k.bytes = 1;
  const std::uint32_t first = table.intern(std::vector<Kernel>{k});  // 1 s
  k.bytes = 2;
  const std::uint32_t second = table.intern(std::vector<Kernel>{k});  // 2 s
  OpId ops[4];
  ops[0] = b.compute({0, s0, Category::forward, "a"}, 5e12, 0, 0, second);  // 2 s, not 5 s
  ops[1] = b.compute({0, s0, Category::forward, "b"}, 5e12, 0, 0, first);   // 1 s
  ops[2] = b.compute({0, s0, Category::forward, "c"}, 5e12, 0, 0, first);   // 1 s
  ops[3] = b.compute({0, s0, Category::forward, "d"}, 5e11, 0);             // 0.5 s by FLOPs
  const Schedule s = std::move(b).finish();
  topology = gpus_on_a_switch(1);
  const CountedLists lists;
  const auto tl = simulate(s, topology, network, lists);
  EXPECT_EQ(lists.calls, 1);
  EXPECT_DOUBLE_EQ(sec(tl.end[ops[0]]), 2.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ops[1]]), 3.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ops[2]]), 4.0);
  EXPECT_DOUBLE_EQ(sec(tl.end[ops[3]]), 4.5);
  // A model that does not cost kernels costs every op by its FLOPs.
  EXPECT_DOUBLE_EQ(sec(run(s, 1).makespan), 5.0 + 5.0 + 5.0 + 0.5);
}

TEST_F(Fixture, SameScheduleGivesTheSameTimeline) {
  auto make = [] {
    ScheduleBuilder b(4);
    const auto s0 = b.stream("compute");
    const auto s1 = b.stream("comm");
    const GroupId g = b.add_group({0, 1, 2, 3}, "dp");
    for (Rank r = 0; r < 4; ++r) {
      const OpId c = b.compute({r, s0, Category::backward, "bwd"}, 1e11 * (r + 1), 0);
      const OpId deps[] = {c};
      b.collective({r, s1, Category::dp_comm, "ar", kNone, deps}, CollectiveType::all_reduce, g,
                   1000);
      b.compute({r, s0, Category::forward, "next"}, 5e10, 0);
    }
    return std::move(b).finish();
  };
  const auto a = run(make(), 4);
  const auto c = run(make(), 4);
  EXPECT_EQ(a.start, c.start);
  EXPECT_EQ(a.end, c.end);
  EXPECT_EQ(a.events, c.events);
}

// The clock holds about 106 days (int64 picoseconds). Past it, time used to wrap to a negative
// figure that was printed as the iteration time; now arithmetic saturates and the run is a
// ClockOverflow naming the op.
TEST(Clock, ArithmeticSaturatesAtTheEndOfTheClockInsteadOfWrapping) {
  const Time day = Time::from_seconds(86400.0);
  EXPECT_EQ(Time::from_seconds(1e9), Time::end_of_clock());  // 31 years
  EXPECT_EQ(Time::from_seconds(std::nan("")), Time::end_of_clock());
  EXPECT_EQ(day * 200, Time::end_of_clock());
  EXPECT_EQ(day * 100 + day * 100, Time::end_of_clock());
  EXPECT_LT(day * 100, Time::end_of_clock());
  EXPECT_EQ(transfer_time(1e9, Bandwidth::bytes_per_second(1e-30)), Time::end_of_clock());
  EXPECT_EQ(Time::max() + Time::zero(), Time::max());  // "never" stays never
}

TEST_F(Fixture, AnOpLongerThanTheClockIsAClockOverflowNamingIt) {
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  b.compute({0, s0, Category::forward, "huge"}, 1e12 * 1e9, 0);  // 1e9 s at 1 TFLOP/s
  try {
    run(std::move(b).finish(), 1);
    ADD_FAILURE() << "no error";
  } catch (const ClockOverflow& e) {
    EXPECT_NE(std::string(e.what()).find("'huge' alone lasts longer than the clock"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Fixture, OpsThatTogetherPassTheClockAreAClockOverflowNotANegativeTime) {
  // Two ops of 60 days each: each fits, their sum (120 days) does not.
  ScheduleBuilder b(1);
  const auto s0 = b.stream("compute");
  b.compute({0, s0, Category::forward, "first"}, 1e12 * 60 * 86400, 0);
  b.compute({0, s0, Category::forward, "second"}, 1e12 * 60 * 86400, 0);
  try {
    const auto tl = run(std::move(b).finish(), 1);
    ADD_FAILURE() << "no error; makespan " << sec(tl.makespan) << " s";
  } catch (const ClockOverflow& e) {
    EXPECT_NE(std::string(e.what()).find("'second' would end after the clock's last instant"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clustersim::engine
