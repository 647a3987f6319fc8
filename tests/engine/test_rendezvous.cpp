// The matching of communication ops (engine/rendezvous.hpp): which ops meet, how the instances
// are numbered (collectives by group and call, then send/recv pairs by (src, dst, tag) and issue
// order, then host copies), and which op an error names. The expected numbers are worked out by
// hand from the rules in DESIGN.md, not read back from the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/rendezvous.hpp"
#include "engine/simulator.hpp"

namespace {

using namespace clustersim::engine;

std::vector<OpId> instance_members(const Rendezvous& r, std::uint32_t inst) {
  const auto& i = r.instances[inst];
  return {r.ops.begin() + i.ops_begin, r.ops.begin() + i.ops_begin + i.size};
}

TEST(Rendezvous, InstancesGoByGroupThenPairKeyThenHostCopy) {
  ScheduleBuilder b(3);
  const auto s = b.stream("compute");
  const GroupId g0 = b.add_group({2, 0}, "g0");  // member order: rank 2 first
  const GroupId g1 = b.add_group({0, 1}, "g1");
  // Issued rank by rank; ids in comments.
  const OpId r0_g1 = b.collective({0, s, Category::dp_comm, "x"}, CollectiveType::all_reduce, g1,
                                  8);                                         // 0
  const OpId r0_send_1_t5 = b.send({0, s, Category::pp_comm, "s"}, 1, 4, 5);  // 1
  const OpId r0_g0 = b.collective({0, s, Category::dp_comm, "y"}, CollectiveType::all_gather, g0,
                                  8);                                                         // 2
  const OpId r0_send_1_t2a = b.send({0, s, Category::pp_comm, "s"}, 1, 4, 2);                 // 3
  const OpId r0_send_1_t2b = b.send({0, s, Category::pp_comm, "s"}, 1, 4, 2);                 // 4
  const OpId r0_copy = b.copy({0, s, Category::optimizer, "c"}, 16, CopyDirection::to_host);  // 5
  const OpId r1_recv_t2a = b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 2);                   // 6
  const OpId r1_g1 = b.collective({1, s, Category::dp_comm, "x"}, CollectiveType::all_reduce, g1,
                                  8);                                         // 7
  const OpId r1_recv_t5 = b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 5);    // 8
  const OpId r1_recv_t2b = b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 2);   // 9
  const OpId r2_send_0_t1 = b.send({2, s, Category::pp_comm, "s"}, 0, 4, 1);  // 10
  const OpId r2_g0 = b.collective({2, s, Category::dp_comm, "y"}, CollectiveType::all_gather, g0,
                                  8);                                         // 11
  const OpId r0_recv_2_t1 = b.recv({0, s, Category::pp_comm, "r"}, 2, 4, 1);  // 12
  const Schedule sched = std::move(b).finish();
  const Rendezvous r = match_communication(sched);

  // g0 (its members in group order: rank 2, rank 0), then g1; then pairs by key: (0→1, tag 2)
  // twice in issue order, (0→1, tag 5), (2→0, tag 1); then the host copy.
  ASSERT_EQ(r.instances.size(), 7u);
  EXPECT_EQ(instance_members(r, 0), (std::vector<OpId>{r2_g0, r0_g0}));
  EXPECT_EQ(r.instances[0].group, g0);
  EXPECT_EQ(instance_members(r, 1), (std::vector<OpId>{r0_g1, r1_g1}));
  EXPECT_EQ(instance_members(r, 2), (std::vector<OpId>{r0_send_1_t2a, r1_recv_t2a}));
  EXPECT_EQ(instance_members(r, 3), (std::vector<OpId>{r0_send_1_t2b, r1_recv_t2b}));
  EXPECT_EQ(instance_members(r, 4), (std::vector<OpId>{r0_send_1_t5, r1_recv_t5}));
  EXPECT_EQ(instance_members(r, 5), (std::vector<OpId>{r2_send_0_t1, r0_recv_2_t1}));
  EXPECT_EQ(instance_members(r, 6), (std::vector<OpId>{r0_copy}));
  EXPECT_TRUE(r.instances[2].send_recv());
  EXPECT_EQ(r.instances[6].group, kNone);
  ASSERT_EQ(r.instance_of.size(), 13u);
  EXPECT_EQ(r.instance_of[r1_recv_t5], 4u);
  EXPECT_EQ(r.instance_of[r0_g0], 0u);
}

TEST(Rendezvous, AHostCopyIsAnInstanceOfItsOwnAfterThePairs) {
  ScheduleBuilder b(2);
  const auto s = b.stream("compute");
  const OpId copy = b.copy({1, s, Category::optimizer, "c"}, 16, CopyDirection::to_host);
  const OpId send = b.send({0, s, Category::pp_comm, "s"}, 1, 4, 0);
  const OpId recv = b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 0);
  const Rendezvous r = match_communication(std::move(b).finish());
  ASSERT_EQ(r.instances.size(), 2u);
  EXPECT_EQ(instance_members(r, 0), (std::vector<OpId>{send, recv}));
  EXPECT_EQ(instance_members(r, 1), (std::vector<OpId>{copy}));
  EXPECT_EQ(r.instance_of[copy], 1u);
}

std::string matching_error(Schedule s) {
  try {
    match_communication(s);
  } catch (const SimulationError& e) {
    return e.what();
  }
  return "";
}

TEST(Rendezvous, ErrorsNameTheFirstUnmatchedOpByKey) {
  struct Case {
    std::uint32_t ranks;
    std::function<void(ScheduleBuilder&, StreamId)> ops;
    std::vector<std::string> says;
  };
  const Case cases[] = {
      // Sends 0→1 with tag 3 twice, one recv: "2 sends but 1 recvs", naming the second send.
      {2,
       [](ScheduleBuilder& b, StreamId s) {
         b.send({0, s, Category::pp_comm, "first"}, 1, 4, 3);
         b.send({0, s, Category::pp_comm, "second"}, 1, 4, 3);
         b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 3);
       },
       {"2 sends but 1 recvs from rank 0 to rank 1 with tag 3", "'second'"}},
      // Recvs nobody sends to: keys (1→0, tag 9) and (0→1, tag 4); the smaller key's is named.
      {2,
       [](ScheduleBuilder& b, StreamId s) {
         b.recv({0, s, Category::pp_comm, "from1"}, 1, 4, 9);
         b.send({0, s, Category::pp_comm, "s"}, 1, 4, 7);
         b.recv({1, s, Category::pp_comm, "from0"}, 0, 4, 4);
         b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 7);
       },
       {"'from0'", "has no matching send"}},
      // A recv whose key sorts after every send's.
      {3,
       [](ScheduleBuilder& b, StreamId s) {
         b.send({0, s, Category::pp_comm, "s"}, 1, 4, 0);
         b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 0);
         b.recv({1, s, Category::pp_comm, "late"}, 2, 4, 0);
       },
       {"'late'", "has no matching send"}},
      {3,
       [](ScheduleBuilder& b, StreamId s) {
         const GroupId g = b.add_group({0, 1}, "tp");
         b.collective({2, s, Category::tp_comm, "ar"}, CollectiveType::all_reduce, g, 8);
       },
       {"that rank 2 is not a member of"}},
  };
  for (const Case& c : cases) {
    ScheduleBuilder b(c.ranks);
    c.ops(b, b.stream("compute"));
    const std::string e = matching_error(std::move(b).finish());
    for (const std::string& want : c.says)
      EXPECT_NE(e.find(want), std::string::npos) << want << " in: " << e;
  }
}

// A call must agree across the group's members in type, bytes, root (tag) and algorithm. The
// error names the call, the first member's op (in group order) and the first member whose op
// differs, whichever rank issued first: here rank 0 issues first but is the group's second
// member.
TEST(Rendezvous, ACallThatDiffersInAnyFieldNamesTheFirstMemberAndTheOddOne) {
  using Odd = std::function<void(ScheduleBuilder&, const ScheduleBuilder::Common&, GroupId)>;
  const std::pair<const char*, Odd> fields[] = {
      {"bytes", [](ScheduleBuilder& b, const ScheduleBuilder::Common& c,
                   GroupId g) { b.collective(c, CollectiveType::all_reduce, g, 16); }},
      {"type", [](ScheduleBuilder& b, const ScheduleBuilder::Common& c,
                  GroupId g) { b.collective(c, CollectiveType::all_gather, g, 8); }},
      {"root",
       [](ScheduleBuilder& b, const ScheduleBuilder::Common& c, GroupId g) {
         b.collective(c, CollectiveType::all_reduce, g, 8, Algorithm::automatic, 1);
       }},
      {"algorithm",
       [](ScheduleBuilder& b, const ScheduleBuilder::Common& c, GroupId g) {
         b.collective(c, CollectiveType::all_reduce, g, 8, Algorithm::ring);
       }},
  };
  // Group order: rank 1, rank 0, rank 2. Issued rank by rank, two calls each: rank r's calls are
  // ops 2r and 2r + 1. One rank's second call differs.
  for (const auto& [field, odd] : fields) {
    for (const Rank odd_rank : {Rank{0}, Rank{2}}) {
      ScheduleBuilder b(3);
      const auto s = b.stream("compute");
      const GroupId g = b.add_group({1, 0, 2}, "g");
      for (Rank r = 0; r < 3; ++r) {
        b.collective({r, s, Category::dp_comm, "a"}, CollectiveType::all_reduce, g, 8);
        if (r == odd_rank)
          odd(b, {r, s, Category::dp_comm, "odd"}, g);
        else
          b.collective({r, s, Category::dp_comm, "b"}, CollectiveType::all_reduce, g, 8);
      }
      const std::string e = matching_error(std::move(b).finish());
      const std::string odd_op = "'odd' (op " + std::to_string(2 * odd_rank + 1) + ", rank " +
                                 std::to_string(odd_rank) + ")";
      for (const std::string& want : {std::string("collective call 1 on group 'g' does not match"),
                                      std::string("'b' (op 3, rank 1)"), odd_op})
        EXPECT_NE(e.find(want), std::string::npos)
            << field << ", odd rank " << odd_rank << ": " << want << " in: " << e;
    }
  }
  // All agree: no error, two instances with their members in group order.
  ScheduleBuilder b(3);
  const auto s = b.stream("compute");
  const GroupId g = b.add_group({1, 0, 2}, "g");
  for (Rank r = 0; r < 3; ++r) {
    b.collective({r, s, Category::dp_comm, "a"}, CollectiveType::all_reduce, g, 8);
    b.collective({r, s, Category::dp_comm, "b"}, CollectiveType::all_reduce, g, 8);
  }
  const Rendezvous r = match_communication(std::move(b).finish());
  ASSERT_EQ(r.instances.size(), 2u);
  EXPECT_EQ(instance_members(r, 1), (std::vector<OpId>{3, 1, 5}));
}

// Progress through the matching: it rises, passes 0.5 when the scan is done and ends at 1, with
// reports during a scan of more than 2^16 ops.
TEST(Rendezvous, ReportsItsProgressRisingToOne) {
  ScheduleBuilder b(2);
  const auto s = b.stream("compute");
  for (std::uint32_t i = 0; i < 100'000; ++i) {
    b.send({0, s, Category::pp_comm, "s"}, 1, 4, 0);
    b.compute({0, s, Category::forward, "f"}, 1e9, 0);
  }
  for (std::uint32_t i = 0; i < 100'000; ++i)
    b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 0);
  const Schedule sched = std::move(b).finish();
  std::vector<double> reports;
  match_communication(sched, [&](double f) { reports.push_back(f); });
  ASSERT_GE(reports.size(), 5u);  // 300,000 ops: four during the scan, its end, the pairing's
  EXPECT_TRUE(std::is_sorted(reports.begin(), reports.end()));
  EXPECT_GT(reports.front(), 0.0);
  EXPECT_LT(reports.front(), 0.5);
  EXPECT_NE(std::find(reports.begin(), reports.end(), 0.5), reports.end());
  EXPECT_EQ(reports.back(), 1.0);
}

}  // namespace

// The simulator's overload: a communication op's instance goes into the caller's array, the
// other entries keep what the caller put there (the simulator writes them meanwhile), and the
// instances are numbered as by the plain overload.
TEST(Rendezvous, MatchingIntoTheCallersArrayWritesOnlyTheCommunicationOpsEntries) {
  ScheduleBuilder b(2);
  const auto s = b.stream("compute");
  const GroupId g = b.add_group({0, 1}, "g");
  b.compute({0, s, Category::forward, "f"}, 1e9, 0);                               // 0
  b.collective({0, s, Category::dp_comm, "x"}, CollectiveType::all_reduce, g, 8);  // 1
  b.send({0, s, Category::pp_comm, "s"}, 1, 4, 7);                                 // 2
  b.copy({0, s, Category::optimizer, "d"}, 16);                                    // 3: device
  b.copy({0, s, Category::optimizer, "h"}, 16, CopyDirection::to_host);            // 4
  b.recv({1, s, Category::pp_comm, "r"}, 0, 4, 7);                                 // 5
  b.collective({1, s, Category::dp_comm, "x"}, CollectiveType::all_reduce, g, 8);  // 6
  b.compute({1, s, Category::forward, "f"}, 1e9, 0);                               // 7
  const Schedule sched = std::move(b).finish();

  constexpr std::uint32_t kUntouched = 0x12345678u;
  std::vector<std::uint32_t> instance_of(sched.ops.size(), kUntouched);
  const Rendezvous into = match_communication(sched, instance_of);
  // The all-reduce is instance 0, the pair 1, the host copy 2.
  EXPECT_EQ(instance_of,
            (std::vector<std::uint32_t>{kUntouched, 0, 1, kUntouched, 2, 1, 0, kUntouched}));
  EXPECT_TRUE(into.instance_of.empty());
  const Rendezvous plain = match_communication(sched);
  EXPECT_EQ(plain.instance_of, (std::vector<std::uint32_t>{kNone, 0, 1, kNone, 2, 1, 0, kNone}));
  EXPECT_EQ(into.ops, plain.ops);
  ASSERT_EQ(into.instances.size(), plain.instances.size());
  for (std::size_t i = 0; i < plain.instances.size(); ++i) {
    EXPECT_EQ(into.instances[i].ops_begin, plain.instances[i].ops_begin);
    EXPECT_EQ(into.instances[i].size, plain.instances[i].size);
    EXPECT_EQ(into.instances[i].group, plain.instances[i].group);
  }

  std::vector<std::uint32_t> short_array(sched.ops.size() - 1);
  EXPECT_THROW(match_communication(sched, short_array), std::invalid_argument);
}
