// The simulator's queues as its loop drives them. BM_EventQueue: the heap under every queue (a
// pop, then a push of a later event, as a network model's event starts the next). BM_OpEndQueue:
// the GPU ops' ends (engine/op_end_queue.hpp) with a tensor-parallel group's pattern, the eight
// members' ends popped one by one, then their next ops' ends pushed at one instant when their
// collective ends. Ranks queued: ~1,024 on GPT-3 175B, ~16,384 on the 16,384-GPU plan.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/op_end_queue.hpp"

namespace {

using clustersim::engine::EventQueue;
using clustersim::engine::OpEndQueue;
using clustersim::engine::Time;

// Op durations of 1 ns to 1 ms, in picoseconds.
Time duration(std::mt19937_64& rng) {
  return Time::from_ps(1000 + static_cast<std::int64_t>(rng() % 1'000'000'000));
}

void BM_EventQueue(benchmark::State& state) {
  const auto queued = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(7);
  EventQueue<OpEndQueue::End> q;
  for (std::uint32_t s = 0; s < queued; ++s)
    q.push(duration(rng), {s, s});
  std::int64_t events = 0;
  for (auto _ : state) {
    for (int k = 0; k < 1024; ++k) {
      const auto e = q.pop();
      q.push(e.time + duration(rng), {e.payload.op + 1, e.payload.stream});
    }
    events += 1024;
  }
  state.SetItemsProcessed(events);  // events a second
}
BENCHMARK(BM_EventQueue)->Arg(1024)->Arg(16384);

// range(0) ranks in groups of range(1) that end and start together (1: every end alone).
void BM_OpEndQueue(benchmark::State& state) {
  const auto ranks = static_cast<std::uint32_t>(state.range(0));
  const auto group = static_cast<std::uint32_t>(state.range(1));
  std::mt19937_64 rng(7);
  OpEndQueue q;
  for (std::uint32_t r = 0; r < ranks; r += group) {
    const Time t = duration(rng);
    for (std::uint32_t m = 0; m < group; ++m)
      q.push(t, {r + m, r + m});
  }
  std::vector<OpEndQueue::End> ends(group);
  std::int64_t events = 0;
  for (auto _ : state) {
    for (int k = 0; k < 128; ++k) {
      const Time now = q.front_time();
      const Time next = now + duration(rng);
      // The members' ends pop (their next ops are the collective, which waits for all), then
      // the collective's end starts their next ops together.
      for (std::uint32_t m = 0; m < group; ++m) {
        ends[m] = q.front();
        q.pop_front();
      }
      for (std::uint32_t m = 0; m < group; ++m)
        q.push(next, {ends[m].op + 1, ends[m].stream});
    }
    events += 128 * group;
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_OpEndQueue)->Args({1024, 1})->Args({1024, 8})->Args({16384, 1})->Args({16384, 8});

}  // namespace
