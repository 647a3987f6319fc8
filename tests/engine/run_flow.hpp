// Test helper: one transfer plan on an idle flow model, run to its completion.
#pragma once

#include <vector>

#include "engine/network/network_model.hpp"

namespace clustersim::engine {

// Seconds until the plan of `bytes` started at 0 completes; `link_bytes` (if given) receives the
// bytes every link carried.
inline double run_flow_once(const Topology& t, const TransferPlan& plan, double bytes,
                            std::vector<double>* link_bytes = nullptr) {
  auto model = make_network_model("flow", t);
  model->start(0, plan, bytes, Time::zero());
  std::vector<TransferId> done;
  Time now = Time::zero();
  while (done.empty()) {
    now = model->next_event_time();
    model->advance(now, done);
  }
  if (link_bytes != nullptr) *link_bytes = model->link_bytes();
  return now.seconds();
}

}  // namespace clustersim::engine
