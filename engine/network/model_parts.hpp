// Internal to engine/network: the concrete models behind make_network_model() and the pieces
// they share. Not part of the engine's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/network/network_model.hpp"

namespace clustersim::engine::detail {

std::unique_ptr<NetworkModel> make_ideal_model(const Topology& topology);
std::unique_ptr<NetworkModel> make_analytical_model(const Topology& topology,
                                                    const CollectiveProfile* profile);
std::unique_ptr<NetworkModel> make_flow_model(const Topology& topology,
                                              const CollectiveProfile* profile);

// Adds every flow's bytes of `plan` scaled by `payload_bytes` to the links of its route.
void add_plan_link_bytes(const Topology& topology, const TransferPlan& plan, double payload_bytes,
                         std::vector<double>& link_bytes);

}  // namespace clustersim::engine::detail
