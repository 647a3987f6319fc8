// What the schedule tests share to find an op: rank 0's op by its label (Schedule::label, the
// op's name and micro-batch, e.g. "L0.attn fwd tp all_gather mb0").
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "engine/schedule.hpp"

namespace clustersim::models {

inline bool rank0_has_op(const engine::Schedule& s, const std::string& label) {
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op) == label) return true;
  return false;
}

// Fails the test (and returns the first op) when rank 0 has no such op.
inline const engine::Op& rank0_op(const engine::Schedule& s, const std::string& label) {
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op) == label) return op;
  ADD_FAILURE() << "no op '" << label << "' on rank 0";
  return s.ops.front();
}

}  // namespace clustersim::models
