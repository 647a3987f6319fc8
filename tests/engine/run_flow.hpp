// Test helpers: every GPU of a topology, and one transfer plan on an idle flow model, run to its
// completion.
#pragma once

#include <numeric>
#include <vector>

#include "engine/network/network_model.hpp"

namespace clustersim::engine {

// Every GPU of `t`, in endpoint order: a collective's members over the whole cluster.
inline std::vector<EndpointId> all_gpus(const Topology& t) {
  std::vector<EndpointId> m(t.num_gpus());
  std::iota(m.begin(), m.end(), EndpointId{0});
  return m;
}

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
