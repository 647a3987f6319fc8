// The simulator's event queue (engine/event_queue.hpp) as its loop drives it: most events are a
// GPU op's end that starts the stream's next op (replace_top), the rest a pop and a later push.
// The queue holds about one event per running stream: ~860 on GPT-3 175B's 1,024 GPUs, ~16,000
// on the 16,384-GPU plan.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

#include "engine/event_queue.hpp"

namespace {

using clustersim::engine::EventQueue;
using clustersim::engine::Time;

struct OpEnd {  // the simulator's payload: an op and its stream
  std::uint32_t op;
  std::uint32_t stream;
};

void BM_EventQueue(benchmark::State& state) {
  const auto queued = static_cast<std::uint32_t>(state.range(0));
  std::mt19937_64 rng(7);
  // Op durations of 1 ns to 1 ms, in picoseconds.
  const auto duration = [&rng] { return Time::from_ps(1000 + rng() % 1'000'000'000); };
  EventQueue<OpEnd> q;
  for (std::uint32_t s = 0; s < queued; ++s)
    q.push(duration(), {s, s});
  std::uint64_t ops = 0;
  for (auto _ : state) {
    for (int k = 0; k < 1024; ++k) {
      const auto top = q.top();
      if (rng() % 10 < 7) {
        q.replace_top(top.time + duration(), {top.payload.op + 1, top.payload.stream});
      } else {
        benchmark::DoNotOptimize(q.pop());
        q.push(top.time + duration(), {top.payload.op + 1, top.payload.stream});
      }
    }
    ops += 1024;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));  // events a second
}
BENCHMARK(BM_EventQueue)->Arg(1024)->Arg(16384);

}  // namespace
