// What clicking an op highlights: the ops it depends on, the same collective on the other ranks
// of its group (the n-th collective a rank issues on a group matches the n-th of every member, as
// the engine matches them) and, for a send or recv, its partner (matched by source, destination
// and tag, in order).
#pragma once

#include <optional>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::gui {

struct OpRelations {
  std::vector<engine::OpId> dependencies;
  std::vector<engine::OpId> peers;  // the collective's ops on the group's other ranks
  std::optional<engine::OpId> partner;
};

// One pass over the schedule: computed on a click, never stored per op.
OpRelations relations_of(const engine::Schedule& schedule, engine::OpId op);

}  // namespace clustersim::gui
