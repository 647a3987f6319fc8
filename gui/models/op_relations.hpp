// What clicking an op highlights: the ops it depends on, the same collective on the other ranks
// of its group (the n-th collective a rank issues on a group matches the n-th of every member, as
// the engine matches them) and, for a send or recv, its partner (matched by source, destination
// and tag, in order).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"

namespace clustersim::gui {

struct OpRelations {
  std::vector<engine::OpId> dependencies;
  std::vector<engine::OpId> peers;  // the collective's ops on the group's other ranks
  std::optional<engine::OpId> partner;
};

// One pass over the schedule: computed on a click, never stored per op.
OpRelations relations_of(const engine::Schedule& schedule, engine::OpId op);

// How communication op `op` ran, for its tooltip: "all_reduce on dp[0] · ring / Simple · 16
// channels", "send to rank 1 on pp[0] · 4 channels" (the communicator it was posted on when a
// group's: docs/network.md "Sends: the communicator"); the algorithm, protocol and channels only
// where `timeline` has them (a .pftrace read back does not). Empty for other ops.
std::string transfer_text(const engine::Schedule& schedule, const engine::Timeline& timeline,
                          engine::OpId op);

}  // namespace clustersim::gui
