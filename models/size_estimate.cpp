#include "models/size_estimate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <variant>

namespace clustersim::models {
namespace {

std::string str(std::int64_t v) {
  return std::to_string(v);
}

std::string gigabytes(std::int64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g GB", static_cast<double>(bytes) / 1e9);
  return s;
}

}  // namespace

SizeEstimate estimate_size(const Scenario& s, bool folded) {
  std::int64_t layers = 0;  // transformer blocks or list layers, repeats included
  if (const auto* t = std::get_if<TransformerSpec>(&s.model.body))
    layers = t->num_layers + 2;  // the embedding and the head
  else
    for (const LayerSpec& l : std::get<std::vector<LayerSpec>>(s.model.body))
      layers += l.repeat;
  const std::int64_t micro = s.num_microbatches();
  const std::int64_t per_stage = std::max<std::int64_t>(1, layers / s.parallel.pp);
  const std::int64_t replicas = folded ? std::max(1, s.parallel.dp / s.parallel.ep) : 1;
  const std::int64_t ranks = s.world_size() / replicas;
  SizeEstimate e;
  e.ops = ranks * s.simulation.iterations * micro * 2 * per_stage;
  e.bytes = e.ops * kBytesPerOp;
  e.key = s.simulation.iterations > 1 ? "simulation.iterations"
          : micro >= per_stage        ? "training.global_batch"
                                      : "model";
  e.factors = str(ranks) + (replicas > 1 ? " simulated" : "") + " ranks · " +
              str(s.simulation.iterations) + " iteration(s) · " + str(micro) +
              " micro-batches · 2 · " + str(per_stage) + " layers per stage";
  return e;
}

std::int64_t default_memory_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;  // unknown: no budget
  return static_cast<std::int64_t>(pages) * page_size / 2;
}

void check_memory_budget(const Scenario& s, std::int64_t max_bytes, const std::string& budget,
                         bool folded) {
  const SizeEstimate e = estimate_size(s, folded);
  if (max_bytes <= 0 || e.bytes <= max_bytes) return;
  s.fail(e.key, "simulating it needs at least " + gigabytes(e.bytes) + " (" + str(e.ops) +
                    " ops, " + e.factors + ", about " + str(kBytesPerOp) +
                    " bytes each), more than " + budget + " (" + gigabytes(max_bytes) +
                    "); allowed: fewer iterations (--set simulation.iterations=1), micro-batches "
                    "(a smaller training.global_batch) or ranks, or a larger --max-memory");
}

}  // namespace clustersim::models
