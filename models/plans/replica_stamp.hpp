// Building the schedule of data-parallel replicas by copying (issue 11). Every data-parallel
// replica issues the same ops with the same costs: a rank's work depends on its tensor, context,
// expert and pipeline coordinates, never on its data-parallel index (docs/performance.md
// "Folding"). So a rank of replica k > 0 need not run the plans again: its ops are those its
// counterpart in replica 0 (the rank with the same other coordinates) issued, stamped with its
// own rank, its own groups and its own pipeline peers (engine::ScheduleBuilder::stamp). This is
// a construction shortcut, not folding: every rank still issues and simulates its ops, and the
// schedule equals the one built rank by rank, op for op and group for group.
//
// Tensor-parallel ranks likewise: the ranks of one (dp, cp, ep, pp) position issue the same ops
// on their shards, so a rank of tp index t > 0 copies the one at index 0, its peers and groups
// rotated by t along the tp axis (a tp group maps onto itself). Folded runs stamp these too: a
// replica's records are held once per tp group (the 1T run's 7.36 M ops in 0.92 M records).
//
// Under HSDP a replica is a shard group (parallel.fsdp.shard_group consecutive members of a dp
// group, by default a node's): a run of whole dp / ep replica indices where the dp axis varies
// slowest in a dp group. A rank of shard group k > 0 copies the rank at its place in shard group
// 0 (same tp, cp, ep and pp coordinates, dp index modulo the shard group's indices). Layouts where
// shard groups are not such runs, or their size differs between ranks, are built rank by rank.
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
  // `replicas`: stamp data-parallel replicas where the plan allows it exactly (replica_width);
  // `tensor_parallel`: stamp the tensor-parallel ranks of each position from its tp index 0.
  // Neither: every rank is its own source (nothing is stamped).
  ReplicaStamper(const PlanContext& ctx, engine::ScheduleBuilder& builder, ProcessGroups& groups,
                 bool replicas, bool tensor_parallel);

  // The rank whose ops rank `r` copies: `r` itself when it builds its own (replica 0).
  engine::Rank source(engine::Rank r) const;
  // The simulated ranks that build their own ops (the others' are stamped, held once).
  std::size_t building_ranks() const;

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
  // Rank `x`, named by r's source, as seen from `r`: its tp index rotated by r's (rotated), and
  // from replica 0 (dp index below width_) into r's replica (shifted).
  engine::Rank counterpart(engine::Rank x, engine::Rank r) const;
  engine::Rank rotated(engine::Rank x, engine::Rank r) const;
  engine::Rank shifted(engine::Rank x, engine::Rank r) const;
  engine::GroupId group_for(engine::GroupId g, engine::Rank r, std::string_view kind);

  const RankLayout& layout_;
  engine::ScheduleBuilder& builder_;
  ProcessGroups& groups_;
  bool enabled_ = false;
  int width_ = 1;  // dp / ep indices one replica spans (HSDP: a shard group's; else 1); 0: off
  int tp_ = 1;     // tensor-parallel indices stamped from index 0 (1: none)
  std::vector<ProcessGroups::Log> logs_;    // per source rank: its latest build's groups
  std::vector<std::vector<Block>> blocks_;  // per rank: its ops, one block per iteration
  std::vector<engine::GroupId> group_map_;  // source group -> the stamped rank's (kNone: none)
};

// The dp / ep indices one stamped replica spans: 1 (a replica per index) but under HSDP, where it
// is a shard group's; 0 where nothing can be stamped exactly (one replica; HSDP's shard groups
// not runs of whole indices of one size).
int replica_width(const PlanContext& ctx);

}  // namespace clustersim::models
