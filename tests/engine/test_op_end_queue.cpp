// OpEndQueue (engine/op_end_queue.hpp) pops the simulator's op ends in EventQueue's order (by
// time, ties in push order) while ends pushed one after another at one instant share one entry.
// Checked against an EventQueue fed the same pushes, through random pushes and pops with runs of
// equal times, as the simulator makes them.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "engine/event_queue.hpp"
#include "engine/op_end_queue.hpp"

namespace {

using clustersim::engine::EventQueue;
using clustersim::engine::OpEndQueue;
using clustersim::engine::Time;

TEST(OpEndQueue, EndsPushedTogetherAtOneInstantShareOneEntryAndPopInPushOrder) {
  OpEndQueue q;
  q.push(Time::from_ps(50), {1, 10});
  for (std::uint32_t m = 0; m < 8; ++m)  // a tensor-parallel group's eight next ops
    q.push(Time::from_ps(70), {100 + m, m});
  q.push(Time::from_ps(60), {2, 20});
  q.push(Time::from_ps(70), {3, 30});  // the same instant, but not in the run: after it
  EXPECT_EQ(q.entries(), 4u);          // 50; the eight at 70; 60; the last run (70)
  const std::uint32_t want_ops[] = {1, 2, 100, 101, 102, 103, 104, 105, 106, 107, 3};
  const std::int64_t want_times[] = {50, 60, 70, 70, 70, 70, 70, 70, 70, 70, 70};
  for (std::size_t i = 0; i < std::size(want_ops); ++i) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.front_time().ps(), want_times[i]);
    EXPECT_EQ(q.front().op, want_ops[i]);
    q.pop_front();
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), Time::max());
}

TEST(OpEndQueue, PopsAsAnEventQueueFedTheSamePushes) {
  std::mt19937 rng(3);
  OpEndQueue q;
  EventQueue<OpEndQueue::End> want;
  std::uint32_t next_op = 0;
  std::int64_t now = 0;
  std::size_t grouped_pushes = 0;
  for (int step = 0; step < 300'000; ++step) {
    if (rng() % 2 == 0 || want.empty()) {
      // A run of 1 to 8 ends at one instant, as a collective's members start their next ops;
      // few distinct durations, so that other pushes tie with it too.
      const std::int64_t t = now + static_cast<std::int64_t>(rng() % 16);
      const std::uint32_t run = 1 + static_cast<std::uint32_t>(rng() % 8);
      grouped_pushes += run - 1;
      for (std::uint32_t k = 0; k < run; ++k) {
        const OpEndQueue::End e{next_op++, static_cast<std::uint32_t>(rng() % 1024)};
        q.push(Time::from_ps(t), e);
        want.push(Time::from_ps(t), e);
      }
    } else {
      // Pop as the simulator does: read the front, push what it starts, then pop it.
      ASSERT_FALSE(q.empty());
      const auto w = want.top();
      ASSERT_EQ(q.front_time(), w.time);
      ASSERT_EQ(q.front().op, w.payload.op);
      ASSERT_EQ(q.front().stream, w.payload.stream);
      now = w.time.ps();
      want.pop();
      if (rng() % 4 == 0) {
        const OpEndQueue::End e{next_op++, 7};
        q.push(Time::from_ps(now + 3), e);
        want.push(Time::from_ps(now + 3), e);
      }
      q.pop_front();
    }
    ASSERT_LE(q.entries(), want.size());
  }
  EXPECT_GT(grouped_pushes, 100'000u);
  while (!want.empty()) {
    ASSERT_EQ(q.front().op, want.top().payload.op);
    want.pop();
    q.pop_front();
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
