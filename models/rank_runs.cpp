#include "models/rank_runs.hpp"

namespace clustersim::models {

std::vector<engine::OpId> RankRuns::ops_of(const engine::Schedule& schedule,
                                           engine::Rank rank) const {
  std::vector<engine::OpId> ids;
  if (overflowed_) {
    for (auto op = schedule.ops.begin(); op != schedule.ops.end(); ++op)
      if ((*op).rank == rank) ids.push_back(op.id());
    return ids;
  }
  for (const Run& run : runs_)
    if (run.rank == rank)
      for (engine::OpId id = run.begin; id < run.end; ++id)
        ids.push_back(id);
  return ids;
}

}  // namespace clustersim::models
