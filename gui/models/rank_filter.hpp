// Which ranks the timeline shows: all of them, or those sharing something with one rank — its
// pipeline stage, its data-parallel replica (the ranks holding one copy of the model), its node.
#pragma once

#include <vector>

#include "models/frontend.hpp"

namespace clustersim::gui {

enum class RankScope { all, stage, replica, node };

// In rank order; `rank` is clamped to the world.
std::vector<engine::Rank> ranks_in(RankScope scope, engine::Rank rank,
                                   const models::Prediction& prediction);

}  // namespace clustersim::gui
