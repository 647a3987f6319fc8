#include "models/rank_runs.hpp"

namespace clustersim::models {

std::vector<engine::OpId> RankRuns::ops_of(const engine::Schedule& schedule,
                                           engine::Rank rank) const {
  std::vector<engine::OpId> ids;
  if (overflowed_) {
    for (engine::OpId id = 0; id < schedule.ops.size(); ++id)
      if (schedule.ops[id].rank == rank) ids.push_back(id);
    return ids;
  }
  for (const Run& run : runs_)
    if (run.rank == rank)
      for (engine::OpId id = run.begin; id < run.end; ++id)
        ids.push_back(id);
  return ids;
}

}  // namespace clustersim::models
