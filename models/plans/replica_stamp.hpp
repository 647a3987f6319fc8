// Building the schedule of data-parallel replicas by copying (issue 11). Every data-parallel
// replica issues the same ops with the same costs: a rank's work depends on its tensor, context,
// expert and pipeline coordinates, never on its data-parallel index (docs/performance.md
// "Folding"). So a rank of replica k > 0 need not run the plans again: its ops are those its
// counterpart in replica 0 (the rank with the same other coordinates) issued, stamped with its
// own rank, its own groups and its own pipeline peers (engine::ScheduleBuilder::stamp). This is
// a construction shortcut, not folding: every rank still issues and simulates its ops, and the
// schedule equals the one built rank by rank, op for op and group for group.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "engine/schedule.hpp"
#include "models/plans/plan_context.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

class ReplicaStamper {
 public:
  // `enabled` false: every rank is its own source (nothing is stamped).
  ReplicaStamper(const RankLayout& layout, engine::ScheduleBuilder& builder, ProcessGroups& groups,
                 bool enabled);

  // The rank whose ops rank `r` copies: `r` itself when it builds its own (replica 0).
  engine::Rank source(engine::Rank r) const;

  // Around building a source rank's ops: records the groups it asks for and where its ops lie.
  void begin_build(engine::Rank r);
  void end_build(engine::Rank r);
  // Appends rank `r`'s ops: a copy of its source's latest ones. Asks for `r`'s groups in the
  // order the source asked for its own, so groups are created (and named) in the same order as
  // if `r` had been built.
  void stamp(engine::Rank r);
  // The copy on rank `r` of `op`, an op of source(r) (kNone stays kNone).
  engine::OpId copy_of(engine::Rank r, engine::OpId op) const;

 private:
  struct Block {
    engine::OpId first = 0;
    engine::OpId size = 0;
  };
  // Rank `x` of replica 0 as seen from `r`'s replica.
  engine::Rank counterpart(engine::Rank x, engine::Rank r) const;
  engine::GroupId group_for(engine::GroupId g, engine::Rank r, std::string_view kind);

  const RankLayout& layout_;
  engine::ScheduleBuilder& builder_;
  ProcessGroups& groups_;
  bool enabled_ = false;
  std::vector<ProcessGroups::Log> logs_;    // per source rank: its latest build's groups
  std::vector<std::vector<Block>> blocks_;  // per rank: its ops, one block per iteration
  std::vector<engine::GroupId> group_map_;  // source group -> the stamped rank's (kNone: none)
};

}  // namespace clustersim::models
