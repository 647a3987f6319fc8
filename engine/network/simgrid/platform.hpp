// The topology as a SimGrid 3.32 platform (docs/simgrid.md): every GPU is a host,
// every directed link a SHARED SimGrid link with the same bandwidth and latency, and a route is
// exactly the link list Topology::route() gives the flow model. Switches, NICs and CPUs appear only
// as the links of routes: SimGrid routes are link lists, so routers would add nothing.
//
// SimGrid's engine is a process-wide singleton whose clock never goes back (a second engine in the
// same process starts where the first stopped), so a second simulation could not reproduce the
// first's figures. One Platform may therefore exist per process; a second throws.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/network/network_model.hpp"
#include "engine/topology.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace clustersim::engine::detail::sg {

class ClusterZone;

class Platform {
 public:
  // Takes the process's SimGrid engine, configured by `settings`, and builds `topology` in it.
  // `topology` must outlive every message sent on the platform. Throws std::runtime_error when
  // a Platform was made before in this process, std::invalid_argument for an unknown model.
  Platform(const Topology& topology, const SimgridSettings& settings);
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  simgrid::s4u::Host* host(EndpointId e) const { return hosts_[e]; }
  // The bytes/s SimGrid's solver gives the messages crossing link `l` now (s4u::Link::get_usage:
  // the sum of their rates; with crosstraffic, 5 % of the reverse direction's too). Current once
  // SimGrid has solved its sharing since the last message started or ended (next_event_delay).
  double link_usage(LinkId l) const;
  // The latency SimGrid charges a message from src to dst: the route's links × the latency factor.
  double message_latency(EndpointId src, EndpointId dst) const;

  // The factors of the messages started from now on. SimGrid multiplies the route's latency by
  // `latency` (the scenario's for a message that waits for its whole round trip, 0 for a pipelined
  // chunk whose latency overlaps the chunk before it) and the rate at which a message's bytes
  // progress on its share of the links by `bandwidth`.
  static void set_message_factors(double latency, double bandwidth);
  // Bounds the rate at which the next message, over `route` (Topology::route), progresses to
  // `bytes_per_second` (0: no bound beyond SimGrid's own), inside SimGrid's max-min solver, so
  // that a capped message takes no more than its cap and leaves the rest of its links to the
  // others. Returns false, and bounds nothing, where the route has no latency: SimGrid's only
  // per-message bound for host-to-host messages is TCP-gamma / (2 × route latency)
  // (docs/simgrid.md).
  bool bound_next_message(std::span<const LinkId> route, double bytes_per_second);

  // SimGrid's clock, seconds.
  static double clock();
  // Seconds from now to SimGrid's next event (a latency or a message ending); < 0 when none.
  static double next_event_delay();
  // Runs SimGrid up to `date`, handling the events due by then (none when `date` is past).
  static void run_until(double date);

 private:
  const Topology& topology_;
  double latency_factor_ = 1.0;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<const simgrid::s4u::Link*> links_;  // by LinkId
  double default_gamma_ = 0.0;                    // network/TCP-gamma as configured
  double gamma_ = 0.0;                            // as set for the next message
};

}  // namespace clustersim::engine::detail::sg
