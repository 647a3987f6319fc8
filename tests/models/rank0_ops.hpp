// What the schedule tests share to find an op: an op by its rank and label (Schedule::label, the
// op's name and micro-batch, e.g. "L0.attn fwd tp all_gather mb0"), and a collective's ranks.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::models {

inline bool rank0_has_op(const engine::Schedule& s, const std::string& label) {
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op) == label) return true;
  return false;
}

// Fails the test (and returns the first op) when rank 0 has no such op.
inline engine::Op rank0_op(const engine::Schedule& s, const std::string& label) {
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op) == label) return op;
  ADD_FAILURE() << "no op '" << label << "' on rank 0";
  return s.ops.front();
}

// The id of `rank`'s op labelled `label`; std::runtime_error naming both when there is none (a
// test that expects an op to be absent checks for it).
inline engine::OpId find_op(const engine::Schedule& s, engine::Rank rank,
                            const std::string& label) {
  for (engine::OpId i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].rank == rank && s.label(s.ops[i]) == label) return i;
  throw std::runtime_error("no op '" + label + "' on rank " + std::to_string(rank));
}

// The ranks of a collective op's group.
inline const std::vector<engine::Rank>& group_ranks(const engine::Schedule& s, engine::OpId id) {
  return s.groups[s.ops[id].group_or_peer].ranks;
}

}  // namespace clustersim::models
