#include "models/gemm_shapes.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "models/kernels/kernel_cost.hpp"
#include "models/plans/training_schedule.hpp"

namespace clustersim::models {

std::vector<ScenarioGemm> scenario_gemm_shapes(const Scenario& scenario, std::size_t limit) {
  const BuiltSchedule built = build_schedule(scenario, /*fold_data_parallel=*/true);
  const engine::Schedule& s = built.schedule;
  // Launches per kernel list, then per distinct GEMM of the lists.
  std::vector<std::uint64_t> uses(s.kernels.size(), 0);
  for (const engine::Op& op : s.ops)
    if (op.kind == engine::OpKind::compute && op.kernels != engine::kNone) ++uses[op.kernels];
  using Key = std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                         bool, bool>;
  std::map<Key, ScenarioGemm> distinct;
  for (std::uint32_t list = 0; list < uses.size(); ++list) {
    if (uses[list] == 0) continue;
    for (const engine::Kernel& k : s.kernels.list(list)) {
      if (k.kind != engine::KernelKind::gemm) continue;
      const std::string dtype(to_string(kernels::kernel_precision(k)));
      ScenarioGemm& g = distinct[{dtype, k.m, k.n, k.k, k.batch, k.trans_a, k.trans_b}];
      g = {dtype,
           k.m,
           k.n,
           k.k,
           k.batch,
           k.trans_a,
           k.trans_b,
           g.launches + uses[list],
           g.total_flops + static_cast<double>(uses[list]) * 2.0 * static_cast<double>(k.m) *
                               static_cast<double>(k.n) * static_cast<double>(k.k) *
                               static_cast<double>(k.batch)};
    }
  }
  std::vector<ScenarioGemm> out;
  out.reserve(distinct.size());
  for (auto& [key, g] : distinct)
    out.push_back(std::move(g));
  // Largest share of the iteration's GEMM FLOPs first; the map's order breaks ties.
  std::stable_sort(out.begin(), out.end(), [](const ScenarioGemm& a, const ScenarioGemm& b) {
    return a.total_flops > b.total_flops;
  });
  if (limit > 0 && out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace clustersim::models
