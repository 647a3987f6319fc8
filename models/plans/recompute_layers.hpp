// Which layers full recompute re-runs, and in which checkpointed groups (docs/memory.md
// "Recompute"), as Megatron-LM's TransformerBlock._checkpointed_forward does it
// (megatron/core/transformer/transformer_block.py @a7c9e8c). Each pipeline chunk (virtual stage)
// is a TransformerBlock of its own and counts its blocks from 0:
//   uniform, N: blocks [0, N), [N, 2N), ... each run under one checkpoint, which keeps the
//     group's input only; the backward re-runs the whole group before the group's backward;
//   block, N: blocks 0 .. N − 1 each under a checkpoint of their own; the rest keep every
//     activation and are not recomputed.
// `full` without recompute_method is uniform with N = 1. A layer list's layers are its blocks.
#pragma once

#include <vector>

#include "models/plans/plan_context.hpp"

namespace clustersim::models {

struct RecomputeGroups {
  // By layer index: the checkpoint group that re-runs it, -1 when none does (the embedding, the
  // LM head, the blocks `block` leaves alone; every layer when recompute is not full).
  std::vector<int> group;
  // By layer index: whether the layer's block opens its group (that block's input is the
  // group's input, the one tensor the checkpoint keeps).
  std::vector<bool> opens;

  bool recomputed(int layer) const { return group[static_cast<std::size_t>(layer)] >= 0; }
};

RecomputeGroups full_recompute_groups(const PlanContext& ctx);

}  // namespace clustersim::models
