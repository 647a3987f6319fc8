// Internal to engine/network: the concrete models behind make_network_model() and the pieces
// they share. Not part of the engine's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/event_queue.hpp"
#include "engine/network/network_model.hpp"
#include "engine/slot_pool.hpp"  // pool_alloc

namespace clustersim::engine::detail {

std::unique_ptr<NetworkModel> make_ideal_model(const Topology& topology);
std::unique_ptr<NetworkModel> make_analytical_model(const Topology& topology,
                                                    const CollectiveProfile* profile);
std::unique_ptr<NetworkModel> make_flow_model(const Topology& topology,
                                              const CollectiveProfile* profile);
// engine/network/simgrid/ (built only where SimGrid was found: CLUSTERSIM_HAVE_SIMGRID). Throws
// std::runtime_error when a SimGrid simulation already ran in this process.
std::unique_ptr<NetworkModel> make_simgrid_model(const Topology& topology,
                                                 const CollectiveProfile* profile,
                                                 const NetworkOptions& options);

// The routes of a plan's flows, phase by phase in its flow order, looked up in the topology once
// per plan rather than once per flow: a plan recurs thousands of times (every layer and
// micro-batch: GPT-3 on 1,024 GPUs starts 1.2 M tensor-parallel all-reduces), and the topology's
// route cache is a hash map of every pair used (a flow model run spent 7 % in it). A plan seen
// before is found by the index this object wrote into its RouteSlot: no lookup (a hash map
// keyed by the plan's address, and comparing its flows, cost 4 to 7 % of the 16,384-GPU run in
// cache misses). Other plans go through that map: a plan at an address a finished plan used
// before (a caller's plans need not outlive the model) is told apart by its flows' ends. The
// spans point into the topology's route cache, valid while the topology is unchanged.
class PhaseRoutes {
 public:
  explicit PhaseRoutes(const Topology& topology);
  PhaseRoutes(const PhaseRoutes&) = delete;  // the plans' slots name this object
  PhaseRoutes& operator=(const PhaseRoutes&) = delete;
  struct Flow {
    EndpointId src = 0, dst = 0;
    std::span<const LinkId> route;
    Bandwidth narrowest;  // the route's narrowest link (infinite for an empty route)
  };
  using Phases = std::vector<std::vector<Flow>>;  // per phase of the plan, per flow
  // Valid while this object lives (references stay put as plans are added).
  const Phases& of(const TransferPlan& plan) {
    const std::uint32_t i = plan.route_slot.index_in(id_);
    if (i != kNone && known_[i].plan == &plan) return known_[i].phases;
    return look_up(plan);
  }

 private:
  const Phases& look_up(const TransferPlan& plan);

  struct Known {
    const TransferPlan* plan;
    Phases phases;
  };
  const Topology& topology_;
  std::uint32_t id_;         // this object's, as the plans' slots name it
  std::deque<Known> known_;  // stable addresses
  std::unordered_map<const TransferPlan*, std::uint32_t> index_;  // into known_
};

// Adds every flow's bytes of `plan` scaled by `payload_bytes` to the links of its route.
void add_plan_link_bytes(PhaseRoutes& routes, const TransferPlan& plan, double payload_bytes,
                         std::vector<double>& link_bytes);

}  // namespace clustersim::engine::detail
