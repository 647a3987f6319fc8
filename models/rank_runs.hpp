// Where each rank's ops lie in a schedule's flat op array. Plans build rank after rank (an
// iteration at a time), so a rank's ops are a few runs of consecutive ids; found during a pass
// the caller makes anyway, they let per-rank post-processing (the critical rank's sweep and
// offload, the memory timeline) read one rank's ops instead of scanning all of them again (each
// such scan read 0.6 GB on GPT-3 175B).
#pragma once

#include <cstddef>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::models {

class RankRuns {
 public:
  // Beyond this many runs per op the ranks interleave too finely to be worth listing (a
  // schedule whose ranks alternate op by op): the runs are dropped and ops_of() scans.
  static constexpr std::size_t kOpsPerRun = 16;

  explicit RankRuns(std::size_t ops) : max_runs_(ops / kOpsPerRun + 64) {}

  // Ops must be added in id order, each once.
  void add(engine::OpId id, engine::Rank rank) { add(id, id + 1, rank); }
  // Ops [begin, end), all of `rank`.
  void add(engine::OpId begin, engine::OpId end, engine::Rank rank) {
    if (!runs_.empty() && runs_.back().rank == rank && runs_.back().end == begin) {
      runs_.back().end = end;
      return;
    }
    if (overflowed_) return;
    if (runs_.size() == max_runs_) {
      overflowed_ = true;
      runs_.clear();
      runs_.shrink_to_fit();
      return;
    }
    runs_.push_back({rank, begin, end});
  }

  // The ops of `rank`, in id order.
  std::vector<engine::OpId> ops_of(const engine::Schedule& schedule, engine::Rank rank) const;

 private:
  struct Run {
    engine::Rank rank;
    engine::OpId begin, end;
  };
  std::vector<Run> runs_;
  std::size_t max_runs_;
  bool overflowed_ = false;
};

}  // namespace clustersim::models
