// Plan search speed (issue 14): the analytical model must rank ≥ 1,000 plans/s, and searching
// every plan of Llama 3 70B on 64 H100 and of GPT-3 175B on 1,024 A100 must take under 60 s on
// 2 cores (the counter plans_per_s; the search benchmarks re-simulate none: that is the flow
// model's cost, measured in bench_engine.cpp).
#include <benchmark/benchmark.h>

#include "models/plan_search.hpp"

namespace {

using namespace clustersim::models;

const std::string kScenarios = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";

// One plan: validating it and its closed-form estimate, as the search does for each.
void BM_PlanEvaluation(benchmark::State& state) {
  const Scenario base = load_scenario(kScenarios + "llama3-70b-8xdgx-h100-interleaved.yaml");
  const PlanModelFigures figures = plan_model_figures(base);
  for (auto _ : state) {
    Scenario plan = base;
    validate_scenario(plan);
    benchmark::DoNotOptimize(estimate_plan(plan, figures));
  }
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanEvaluation);

void search(benchmark::State& state, const std::string& file) {
  const Scenario base = load_scenario(kScenarios + file);
  PlanSearchOptions options;
  options.resimulate = 0;
  std::size_t plans = 0;
  for (auto _ : state)
    plans += search_plans(base, options).enumerated;
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
}
void BM_PlanSearchLlama3_70B_64xH100(benchmark::State& state) {
  search(state, "llama3-70b-8xdgx-h100-interleaved.yaml");
}
void BM_PlanSearchGpt3_175B_1024xA100(benchmark::State& state) {
  search(state, "gpt3-175b-1024xA100.yaml");
}
BENCHMARK(BM_PlanSearchLlama3_70B_64xH100)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_PlanSearchGpt3_175B_1024xA100)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
