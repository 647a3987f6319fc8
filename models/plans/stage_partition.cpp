#include "models/plans/stage_partition.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace clustersim::models {

namespace {

// Units a stage boundary may fall between: transformer blocks (attn + mlp, the embedding glued to
// the first, the LM head to the last) or the layers of a list. With `detached`, the embedding
// and the head are units of their own (a first chunk of the embedding alone, a last of the head
// alone: stage_layers entries of 0 at either end, as the Llama 3 405B pipeline).
std::vector<std::vector<int>> units_of(const std::vector<LayerCost>& layers, bool detached) {
  std::vector<std::vector<int>> units;
  std::vector<int> pending;  // the embedding waits for the first block
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    const auto& l = layers[static_cast<std::size_t>(i)];
    if (l.role == LayerRole::embedding) {
      pending.push_back(i);
      if (detached) {
        units.push_back(std::move(pending));
        pending.clear();
      }
      continue;
    }
    if (detached && l.role == LayerRole::head && !units.empty() &&
        layers[static_cast<std::size_t>(units.back().back())].role != LayerRole::head) {
      units.push_back({i});
      continue;
    }
    const bool same_block = l.block >= 0 && !units.empty() &&
                            layers[static_cast<std::size_t>(units.back().back())].block == l.block;
    if (!units.empty() && (l.role == LayerRole::head || same_block)) {
      units.back().push_back(i);
      continue;
    }
    pending.push_back(i);
    units.push_back(std::move(pending));
    pending.clear();
  }
  if (!pending.empty()) units.push_back(std::move(pending));
  return units;
}

double unit_cost(const std::vector<LayerCost>& layers, const std::vector<int>& unit) {
  double c = 0;
  for (int i : unit)
    c += layers[static_cast<std::size_t>(i)].forward_flops +
         layers[static_cast<std::size_t>(i)].backward_flops;
  return c;
}

// Contiguous split of `costs` into `parts` ranges minimizing the largest range (binary search on
// the bound, greedy fill); returns the number of units per range.
std::vector<int> balance(const std::vector<double>& costs, int parts) {
  auto fill = [&](double bound, std::vector<int>* counts) {
    int used = 1;
    double acc = 0;
    int n = 0;
    for (std::size_t i = 0; i < costs.size(); ++i) {
      const int left_units = static_cast<int>(costs.size() - i);
      const int left_parts = parts - used;
      if (n > 0 && (acc + costs[i] > bound || left_units <= left_parts)) {
        if (counts) counts->push_back(n);
        ++used;
        acc = 0;
        n = 0;
      }
      acc += costs[i];
      ++n;
    }
    if (counts) counts->push_back(n);
    return used <= parts;
  };
  double lo = 0, hi = 0;
  for (double c : costs) {
    lo = std::max(lo, c);
    hi += c;
  }
  for (int iter = 0; iter < 100 && hi - lo > 1e-9 * hi; ++iter) {
    const double mid = 0.5 * (lo + hi);
    (fill(mid, nullptr) ? hi : lo) = mid;
  }
  std::vector<int> counts;
  fill(hi, &counts);
  while (static_cast<int>(counts.size()) < parts)
    counts.push_back(0);
  return counts;
}

}  // namespace

std::vector<std::vector<int>> partition_layers(const ParallelConfig& parallel,
                                               const std::vector<LayerCost>& layers) {
  const int chunks = parallel.pp * parallel.virtual_stages;
  const bool transformer = std::any_of(layers.begin(), layers.end(), [](const LayerCost& l) {
    return l.role != LayerRole::generic;
  });
  // Listed stages count blocks; the embedding and the head then are units of their own, one
  // more at each end.
  const bool detached = transformer && !parallel.stage_layers.empty();
  const auto units = units_of(layers, detached);
  const int n = static_cast<int>(units.size());

  std::vector<int> counts;
  if (!parallel.stage_layers.empty()) {
    counts = parallel.stage_layers;
    if (detached) {
      counts.front() += 1;
      counts.back() += 1;
    }
  } else if (transformer) {
    counts.assign(static_cast<std::size_t>(chunks), n / chunks);
  } else {
    std::vector<double> costs;
    for (const auto& u : units)
      costs.push_back(unit_cost(layers, u));
    counts = balance(costs, chunks);
  }
  if (static_cast<int>(counts.size()) != chunks ||
      std::accumulate(counts.begin(), counts.end(), 0) != n)
    throw std::invalid_argument("partition_layers: stage sizes do not cover the " +
                                std::to_string(n) + " units (the scenario was not validated)");

  std::vector<std::vector<int>> out(static_cast<std::size_t>(chunks));
  int u = 0;
  for (int g = 0; g < chunks; ++g)
    for (int k = 0; k < counts[static_cast<std::size_t>(g)]; ++k, ++u)
      for (int layer : units[static_cast<std::size_t>(u)])
        out[static_cast<std::size_t>(g)].push_back(layer);
  // DualPipe: rank s's second chunk is stage pp − 1 − s, run by the reverse direction.
  if (parallel.schedule == PipelineSchedule::dualpipe)
    for (int stage = 0; stage < parallel.pp; ++stage)
      out.push_back(out[static_cast<std::size_t>(parallel.pp - 1 - stage)]);
  return out;
}

}  // namespace clustersim::models
