// EventQueue (engine/event_queue.hpp): events pop by time, ties in push order. Checked against a
// plain ordered set of (time, push number) kept alongside, through random pushes, pops and
// compact().
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>

#include "engine/event_queue.hpp"

namespace {

using clustersim::engine::EventQueue;
using clustersim::engine::Time;

TEST(EventQueue, TiesPopInPushOrder) {
  EventQueue<int> q;
  q.push(Time::from_ps(5), 0);
  q.push(Time::from_ps(3), 1);
  q.push(Time::from_ps(5), 2);
  q.push(Time::from_ps(3), 3);
  q.push(Time::from_ps(4), 4);
  const int want[] = {1, 3, 4, 0, 2};
  for (int w : want) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.pop().payload, w);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), Time::max());
}

TEST(EventQueue, MatchesAnOrderedSetThroughRandomOperations) {
  std::mt19937 rng(11);
  EventQueue<std::uint32_t> q;
  // (time, push number, payload): the order the queue promises.
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint32_t>> want;
  std::uint64_t pushed = 0;
  std::uint32_t next_payload = 0;
  for (int step = 0; step < 200'000; ++step) {
    const auto op = rng() % 10;
    // Few distinct times, so that ties are common.
    const std::int64_t t = static_cast<std::int64_t>(rng() % 64);
    if (op < 5 || want.empty()) {
      q.push(Time::from_ps(t), next_payload);
      want.emplace(t, pushed++, next_payload++);
    } else if (op < 8) {
      const auto [wt, ws, wp] = *want.begin();
      want.erase(want.begin());
      const auto e = q.pop();
      ASSERT_EQ(e.time.ps(), wt);
      ASSERT_EQ(e.payload, wp);
    } else if (op <
               9) {  // a pop and a push at once, as a network model's event that starts the next
      ASSERT_EQ(q.pop().payload, std::get<2>(*want.begin()));
      want.erase(want.begin());
      q.push(Time::from_ps(t), next_payload);
      want.emplace(t, pushed++, next_payload++);
    } else {
      // Drop the odd payloads.
      q.compact([](std::uint32_t p) { return p % 2 == 0; });
      std::erase_if(want, [](const auto& w) { return std::get<2>(w) % 2 == 1; });
    }
    ASSERT_EQ(q.size(), want.size());
    if (!want.empty()) {
      ASSERT_EQ(q.next_time().ps(), std::get<0>(*want.begin()));
    }
  }
  while (!want.empty()) {
    ASSERT_EQ(q.pop().payload, std::get<2>(*want.begin()));
    want.erase(want.begin());
  }
  EXPECT_TRUE(q.empty());
}

// A queue as deep as a network model's at 16,384 GPUs: every level of the four-ary heap is
// crossed by the sifts, and compact() rebuilds it from many parents.
TEST(EventQueue, ADeepQueuePopsInOrderThroughPushesAndCompaction) {
  std::mt19937 rng(5);
  EventQueue<std::uint32_t> q;
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint32_t>> want;
  std::uint64_t pushed = 0;
  for (std::uint32_t p = 0; p < 20'000; ++p) {
    const auto t = static_cast<std::int64_t>(rng() % 100'000);
    q.push(Time::from_ps(t), p);
    want.emplace(t, pushed++, p);
  }
  for (int step = 0; step < 50'000; ++step) {
    const auto [wt, ws, wp] = *want.begin();
    ASSERT_EQ(q.top().time.ps(), wt);
    ASSERT_EQ(q.top().payload, wp);
    want.erase(want.begin());
    const auto t = wt + static_cast<std::int64_t>(rng() % 1000);  // later, as an op's end is
    if (step % 3 == 0) {
      q.push(Time::from_ps(t), wp);  // pushed before the pop: sifts up through a full heap
      q.pop();
    } else {
      q.pop();
      q.push(Time::from_ps(t), wp);
    }
    want.emplace(t, pushed++, wp);
    if (step == 25'000) {
      q.compact([](std::uint32_t p) { return p % 3 != 0; });
      std::erase_if(want, [](const auto& w) { return std::get<2>(w) % 3 == 0; });
    }
  }
  ASSERT_EQ(q.size(), want.size());
  for (const auto& [wt, ws, wp] : want) {
    const auto e = q.pop();
    ASSERT_EQ(e.time.ps(), wt);
    ASSERT_EQ(e.payload, wp);
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
