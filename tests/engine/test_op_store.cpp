// OpStore: ops read by value, a stamped run read through the records it copies with its own
// rank, dependency offset, groups and peers (engine/op_store.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/op_store.hpp"

namespace clustersim::engine {
namespace {

Op record(std::uint64_t bytes, OpKind kind, std::uint32_t group_or_peer, std::uint32_t deps_begin) {
  Op op;
  op.bytes = bytes;
  op.kind = kind;
  op.group_or_peer = group_or_peer;
  op.deps_begin = deps_begin;
  op.deps_count = 1;
  return op;
}

// The fields a stamp may change and the one that names the record.
void expect_same(const Op& got, const Op& want, std::size_t id) {
  EXPECT_EQ(got.bytes, want.bytes) << "op " << id;
  EXPECT_EQ(got.rank, want.rank) << "op " << id;
  EXPECT_EQ(got.deps_begin, want.deps_begin) << "op " << id;
  EXPECT_EQ(got.group_or_peer, want.group_or_peer) << "op " << id;
  EXPECT_EQ(got.kind, want.kind) << "op " << id;
}

TEST(OpStore, AStampedRunReadsItsSourceWithItsOwnRankDependenciesGroupsAndPeers) {
  OpStore ops;
  ops.push_back(record(11, OpKind::compute, 5, 0));     // kernels 5: no group
  ops.push_back(record(12, OpKind::collective, 4, 1));  // group 4
  ops.push_back(record(13, OpKind::send, 1, 2));        // peer 1
  ops.push_back(record(14, OpKind::recv, 1, 3));        // peer 1
  OpStore::Stamp stamp;
  stamp.rank = 7;
  stamp.deps_shift = 10;
  stamp.groups = {{4, 9}};
  stamp.peers = {{1, 8}};
  ASSERT_TRUE(ops.append_stamp(1, 3, stamp));
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops.records(), 4u);  // the copies are not held again
  EXPECT_EQ(ops[4].bytes, 12u);
  EXPECT_EQ(ops[4].rank, 7u);
  EXPECT_EQ(ops[4].deps_begin, 11u);    // 1 + 10
  EXPECT_EQ(ops[4].group_or_peer, 9u);  // group 4 -> 9
  EXPECT_EQ(ops[5].group_or_peer, 8u);  // peer 1 -> 8
  EXPECT_EQ(ops[6].group_or_peer, 8u);
  EXPECT_EQ(ops[6].kind, OpKind::recv);
  EXPECT_EQ(ops[6].deps_begin, 13u);
  EXPECT_EQ(ops[1].rank, 0u);  // the source is unchanged
  EXPECT_EQ(ops[1].group_or_peer, 4u);
  EXPECT_EQ(ops.back().bytes, 14u);
  // A compute op keeps its kernel list: only communication has a group or a peer.
  ASSERT_TRUE(ops.append_stamp(0, 1, stamp));
  EXPECT_EQ(ops[7].group_or_peer, 5u);
  EXPECT_EQ(ops[7].rank, 7u);
}

TEST(OpStore, RefusesToStampStampedOpsOrOpsOfTwoRunsAndAppendsNothing) {
  OpStore ops;
  for (std::uint64_t i = 0; i < 4; ++i)
    ops.push_back(record(i, OpKind::compute, kNone, 0));
  OpStore::Stamp stamp;
  stamp.rank = 1;
  ASSERT_TRUE(ops.append_stamp(0, 4, stamp));           // ids 4..7
  ops.push_back(record(8, OpKind::compute, kNone, 0));  // id 8, a record again
  EXPECT_FALSE(ops.append_stamp(4, 2, stamp));          // stamped ops
  EXPECT_FALSE(ops.append_stamp(3, 2, stamp));          // a record and a stamped op
  EXPECT_FALSE(ops.append_stamp(7, 2, stamp));          // a stamped op and a record
  EXPECT_EQ(ops.size(), 9u);
  EXPECT_TRUE(ops.append_stamp(8, 1, stamp));  // the last record alone
  EXPECT_EQ(ops[9].bytes, 8u);
  EXPECT_THROW(ops.append_stamp(9, 2, stamp), std::invalid_argument);  // past the end
}

// Many runs of records and stamps of different lengths, some shorter than a page of the lookup
// table (1,024 ids) and some longer: every op reads the same by id, by a forward pass, by a
// backward pass and in a shuffled order, and equals a copy made field by field.
TEST(OpStore, ReadsTheSameByIdByPassesAndInAnyOrderAcrossManyRuns) {
  OpStore ops;
  std::vector<Op> expected;             // what each id must read as
  std::vector<std::size_t> record_ids;  // ids held as records
  std::mt19937 rng(7);
  std::uint64_t next_bytes = 0;
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 1 + rng() % 2500;
    if (round % 3 != 2 || record_ids.empty()) {
      // a run of records: bytes count up, so each record is recognisable
      const std::size_t first = ops.size();
      for (std::size_t k = 0; k < n; ++k) {
        const auto kind = k % 3 == 0 ? OpKind::collective : OpKind::compute;
        const Op op = record(next_bytes++, kind, kind == OpKind::compute ? kNone : 1,
                             static_cast<std::uint32_t>(first + k));
        ops.push_back(op);
        expected.push_back(op);
      }
      for (std::size_t k = 0; k < n; ++k)
        record_ids.push_back(first + k);
      continue;
    }
    // a stamp of the last run of records (so its source is one run)
    const std::size_t last_run_end = record_ids.back() + 1;
    std::size_t last_run_begin = last_run_end - 1;
    while (last_run_begin > 0 &&
           std::binary_search(record_ids.begin(), record_ids.end(), last_run_begin - 1) &&
           expected[last_run_begin - 1].bytes + 1 == expected[last_run_begin].bytes)
      --last_run_begin;
    const std::size_t first = last_run_begin + rng() % (last_run_end - last_run_begin);
    const std::size_t count = 1 + rng() % (last_run_end - first);
    OpStore::Stamp stamp;
    stamp.rank = static_cast<Rank>(round);
    stamp.deps_shift = static_cast<std::uint32_t>(1000 * round);
    stamp.groups = {{1, static_cast<std::uint32_t>(100 + round)}};
    ASSERT_TRUE(ops.append_stamp(static_cast<OpId>(first), count, stamp));
    for (std::size_t k = 0; k < count; ++k) {
      Op op = expected[first + k];
      op.rank = stamp.rank;
      op.deps_begin += stamp.deps_shift;
      if (op.kind == OpKind::collective) op.group_or_peer = 100 + static_cast<std::uint32_t>(round);
      expected.push_back(op);
    }
  }
  ASSERT_EQ(ops.size(), expected.size());
  EXPECT_EQ(ops.records(), record_ids.size());
  std::size_t id = 0;
  for (const Op& op : ops) {
    expect_same(op, expected[id], id);
    ++id;
  }
  const OpStore::Reader backwards = ops.reader();
  for (std::size_t i = expected.size(); i-- > 0;)
    expect_same(backwards[static_cast<OpId>(i)], expected[i], i);
  std::vector<OpId> order(expected.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<OpId>(i);
  std::shuffle(order.begin(), order.end(), rng);
  const OpStore::Reader shuffled = ops.reader();
  for (const OpId i : order) {
    expect_same(ops[i], expected[i], i);
    expect_same(shuffled[i], expected[i], i);
  }
  const auto it = ops.begin() + 1234;
  EXPECT_EQ(it.id(), 1234u);
  EXPECT_EQ((*it).bytes, expected[1234].bytes);
  EXPECT_EQ(it[10].bytes, expected[1244].bytes);
  EXPECT_EQ(ops.end() - ops.begin(), static_cast<std::ptrdiff_t>(expected.size()));

  // The pass over the non-compute ops visits exactly those ids, in order, read as above.
  std::vector<OpId> visited;
  ops.for_each_non_compute([&](OpId i, const Op& op) {
    visited.push_back(i);
    expect_same(op, expected[i], i);
  });
  std::vector<OpId> want;
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (expected[i].kind != OpKind::compute) want.push_back(static_cast<OpId>(i));
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(visited, want);

  // The runs tile the ids in order; a stamped run's ops carry its rank and the fields of the
  // records it names, a run of records names its own (record j is the j-th op pushed).
  OpId next = 0;
  std::size_t stamped_ops = 0;
  ops.for_each_run([&](const OpStore::RunView& run) {
    EXPECT_EQ(run.begin, next);
    EXPECT_LT(run.begin, run.end);
    next = run.end;
    for (OpId i = run.begin; i < run.end; ++i) {
      const std::size_t source = record_ids.at(run.first_record + (i - run.begin));
      EXPECT_EQ(expected[i].bytes, expected[source].bytes) << "op " << i;
      if (run.stamped) {
        EXPECT_EQ(expected[i].rank, run.rank) << "op " << i;
        ++stamped_ops;
      } else {
        EXPECT_EQ(source, i);
      }
    }
  });
  EXPECT_EQ(next, expected.size());
  EXPECT_EQ(stamped_ops, expected.size() - record_ids.size());

  // Without peers: the same, but a stamped collective keeps its source's group (1), read by id
  // and by the pass over the non-compute ops.
  const OpStore::Reader raw = ops.reader_without_peers();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    Op op = expected[i];
    if (op.kind == OpKind::collective) op.group_or_peer = 1;
    expect_same(raw[static_cast<OpId>(i)], op, i);
  }
  std::vector<OpId> visited_raw;
  ops.for_each_non_compute<false>([&](OpId i, const Op& op) {
    visited_raw.push_back(i);
    Op source_group = expected[i];
    if (source_group.kind == OpKind::collective) source_group.group_or_peer = 1;
    expect_same(op, source_group, i);
  });
  EXPECT_EQ(visited_raw, want);
}

// A store made from an array of ops (trace assembly) has every op a record; its pass over the
// non-compute ops still skips the compute ones.
TEST(OpStore, AStoreMadeFromAnArrayVisitsItsNonComputeOps) {
  const OpStore ops(
      std::vector<Op>{record(0, OpKind::compute, kNone, 0), record(1, OpKind::send, 3, 0),
                      record(2, OpKind::compute, kNone, 0), record(3, OpKind::copy, kNone, 0),
                      record(4, OpKind::collective, 2, 0)});
  std::vector<std::uint64_t> bytes;
  ops.for_each_non_compute([&](OpId i, const Op& op) {
    EXPECT_EQ(op.bytes, i);
    bytes.push_back(op.bytes);
  });
  EXPECT_EQ(bytes, (std::vector<std::uint64_t>{1, 3, 4}));
  // Its runs: one, of records.
  int runs = 0;
  ops.for_each_run([&](const OpStore::RunView& run) {
    ++runs;
    EXPECT_EQ(run.begin, 0u);
    EXPECT_EQ(run.end, 5u);
    EXPECT_EQ(run.first_record, 0u);
    EXPECT_FALSE(run.stamped);
  });
  EXPECT_EQ(runs, 1);
  OpStore none;
  none.for_each_run([](const OpStore::RunView&) { ADD_FAILURE() << "an empty store has no run"; });
}

}  // namespace
}  // namespace clustersim::engine
