// IndexedEventQueue (engine/indexed_event_queue.hpp): a queued event's key moves in place, ties
// pop by sequence number. MovedEndOrder (engine/moved_end_order.hpp): moved ends pop in exactly
// the order of the former scheme (a fresh push per move, stale events dropped at loop tops),
// checked against that scheme run alongside on EventQueue.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/indexed_event_queue.hpp"
#include "engine/moved_end_order.hpp"

namespace {

using clustersim::engine::EventKey;
using clustersim::engine::EventQueue;
using clustersim::engine::IndexedEventQueue;
using clustersim::engine::MovedEndOrder;
using clustersim::engine::Time;

Time ps(std::int64_t t) {
  return Time::from_ps(t);
}

TEST(IndexedEventQueue, MovedKeysPopInTimeThenSequenceOrder) {
  IndexedEventQueue<char> q(5);
  q.push(0, ps(10), 'a');  // (10, 0)
  q.push(1, ps(20), 'b');  // (20, 1)
  q.push(2, ps(30), 'c');  // (30, 2)
  q.push(3, ps(20), 'd');  // (20, 3)
  q.push(4, ps(40), 'e');  // (40, 4)
  // Decrease-key to a tie: c joins b and d at 20 with sequence 5, so after both.
  q.reschedule(2, {ps(20), q.take_sequence()});
  EXPECT_EQ(q.key(2), (EventKey{ps(20), 5}));
  // Increase-key: b leaves the tie for 30 (sequence 6).
  q.reschedule(1, {ps(30), q.take_sequence()});
  // Decrease-key with an older sequence number: e at (20, 2) goes before d's (20, 3).
  q.reschedule(4, {ps(20), 2});
  // Increase-key of the top: a at (20, 4), between d and c.
  q.reschedule(0, {ps(20), 4});
  // Pop order: e (20, 2), d (20, 3), a (20, 4), c (20, 5), b (30, 6).
  const char want[] = {'e', 'd', 'a', 'c', 'b'};
  for (char w : want) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.pop().payload, w);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), Time::max());
  // A slot is reused once its event popped; replace_top takes the next sequence number (8 after
  // the 7 push takes).
  q.push(2, ps(5), 'x');
  q.push(3, ps(5), 'y');
  q.replace_top(1, ps(5), 'z');  // x leaves; z at (5, 8) after y's (5, 7)
  EXPECT_EQ(q.pop().payload, 'y');
  EXPECT_EQ(q.pop().payload, 'z');
  EXPECT_TRUE(q.empty());
}

TEST(IndexedEventQueue, MatchesAnOrderedSetThroughRandomOperations) {
  std::mt19937 rng(7);
  constexpr std::uint32_t kSlots = 64;
  IndexedEventQueue<std::uint32_t> q(kSlots);
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint32_t>> want;  // (time, seq, slot)
  std::vector<std::pair<std::int64_t, std::uint64_t>> key(kSlots);
  std::vector<bool> queued(kSlots, false);
  std::uint64_t seq = 0;
  for (int step = 0; step < 200'000; ++step) {
    const auto op = rng() % 10;
    const std::uint32_t slot = rng() % kSlots;
    const std::int64_t t = static_cast<std::int64_t>(rng() % 32);  // few times: many ties
    if (op < 4 && !queued[slot]) {
      q.push(slot, ps(t), slot);
      key[slot] = {t, seq};
      want.emplace(t, seq++, slot);
      queued[slot] = true;
    } else if (op < 7 && queued[slot]) {
      // A fresh sequence number, or (one time in four) the slot's own, at another time.
      want.erase({key[slot].first, key[slot].second, slot});
      const std::uint64_t s = rng() % 4 == 0 ? key[slot].second : q.take_sequence();
      if (s == seq) ++seq;
      q.reschedule(slot, {ps(t), s});
      key[slot] = {t, s};
      want.emplace(t, s, slot);
    } else if (op < 9 && !want.empty()) {
      const auto [wt, ws, wslot] = *want.begin();
      want.erase(want.begin());
      const auto e = q.pop();
      ASSERT_EQ(e.time.ps(), wt);
      ASSERT_EQ(e.sequence, ws);
      ASSERT_EQ(e.payload, wslot);
      queued[wslot] = false;
    } else if (!want.empty() && !queued[slot]) {
      const std::uint32_t top = std::get<2>(*want.begin());
      want.erase(want.begin());
      queued[top] = false;
      q.replace_top(slot, ps(t), slot);
      key[slot] = {t, seq};
      want.emplace(t, seq++, slot);
      queued[slot] = true;
    }
    ASSERT_EQ(q.size(), want.size());
    if (!want.empty()) {
      ASSERT_EQ(q.top().sequence, std::get<1>(*want.begin()));
      ASSERT_EQ(q.key(q.top().slot),
                (EventKey{ps(std::get<0>(*want.begin())), std::get<1>(*want.begin())}));
    }
  }
}

// The former scheme, as engine/simulator.cpp ran it: a moved end is a fresh push, and at each
// loop top the events that are not their slot's current end (op and time) are dropped from the
// top. The new one moves the slot's event to the key MovedEndOrder gives. Both must pop the same
// (time, sequence, op) in the same order, through loop tops that pop an event and loop tops that
// do not (a network event before it), with moves back to earlier ends' times.
TEST(MovedEndOrder, PopsInTheOrderOfFreshPushesWithStaleEventsDropped) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    constexpr std::uint32_t kSlots = 16;
    struct Payload {
      std::uint32_t slot, op;
    };
    EventQueue<Payload> old_q;
    IndexedEventQueue<std::uint32_t> new_q(kSlots);
    MovedEndOrder order(kSlots);
    struct Running {
      std::uint32_t op = 0;
      std::int64_t end = -1;  // -1: idle
    };
    std::vector<Running> run(kSlots);
    std::uint32_t next_op = 1;
    std::int64_t now = 0;
    std::size_t popped = 0;
    const auto start = [&](std::uint32_t slot) {
      const std::int64_t end = now + static_cast<std::int64_t>(rng() % 6);
      run[slot] = {next_op, end};
      old_q.push(ps(end), {slot, next_op});
      new_q.push(slot, ps(end), next_op++);
    };
    const auto act = [&] {  // what processing an event does: starts and moved ends
      for (int k = rng() % 4; k-- > 0;) {
        const std::uint32_t slot = rng() % kSlots;
        if (run[slot].end < 0) {
          start(slot);
          continue;
        }
        // Small steps from the current end, so that ends come back to earlier ones' times.
        const std::int64_t d = static_cast<std::int64_t>(rng() % 5) - 2;
        const std::int64_t end = std::max(now, run[slot].end + d);
        if (end == run[slot].end) continue;
        run[slot].end = end;
        old_q.push(ps(end), {slot, run[slot].op});
        const EventKey fresh{ps(end), new_q.take_sequence()};
        new_q.reschedule(slot, order.moved(slot, new_q.key(slot), fresh, ps(now)));
      }
    };
    for (std::uint32_t s = 0; s < kSlots; ++s)
      start(s);
    for (int step = 0; step < 20'000; ++step) {
      // Loop top: the former scheme drops its stale events, the new one records the top.
      while (!old_q.empty()) {
        const auto& e = old_q.top();
        const Running& r = run[e.payload.slot];
        if (r.op == e.payload.op && r.end == e.time.ps()) break;
        old_q.pop();
      }
      if (order.any())
        order.at_loop_top(new_q.empty() ? MovedEndOrder::none()
                                        : EventKey{new_q.top().time, new_q.top().sequence},
                          new_q.next_sequence());
      ASSERT_EQ(old_q.empty(), new_q.empty());
      if (new_q.empty()) {
        start(rng() % kSlots);
        continue;
      }
      ASSERT_EQ(old_q.top().time, new_q.top().time);
      ASSERT_EQ(old_q.top().sequence, new_q.top().sequence);
      ASSERT_EQ(old_q.top().payload.op, new_q.top().payload);
      if (rng() % 3 == 0) {  // a network event first, somewhere before the top
        now += static_cast<std::int64_t>(rng() % (new_q.top().time.ps() - now + 1));
      } else {
        const auto e = new_q.pop();
        old_q.pop();
        now = e.time.ps();
        run[e.slot].end = -1;
        if (order.any()) order.finished(e.slot);
        ++popped;
      }
      act();
    }
    EXPECT_GT(popped, 5'000u);
  }
}

}  // namespace
