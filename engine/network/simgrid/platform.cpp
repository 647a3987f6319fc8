// Builds the SimGrid platform of a Topology (platform.hpp) and wraps the few engine calls the
// simgrid model needs. SimGrid headers stay in engine/network/simgrid/.
#include "engine/network/simgrid/platform.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>
#include <xbt/config.hpp>

namespace clustersim::engine::detail::sg {

namespace s4u = simgrid::s4u;
namespace routing = simgrid::kernel::routing;

// The root zone: routes come from the topology's graph, link for link, as the flow model's do.
class ClusterZone final : public routing::NetZoneImpl {
 public:
  explicit ClusterZone(const Topology& topology) : NetZoneImpl("clustersim"), topology_(topology) {}

  void add_gpu(EndpointId e, const s4u::Host* host) {
    const auto id = static_cast<std::size_t>(host->get_netpoint()->id());
    if (gpu_of_.size() <= id) gpu_of_.resize(id + 1, 0);
    gpu_of_[id] = e;
  }
  void add_link(const s4u::Link* link) {
    links_.push_back({link->get_impl(), link->get_latency()});
  }

  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst,
                       routing::Route* into, double* latency) override {
    for (LinkId l : topology_.route(gpu_of_[src->id()], gpu_of_[dst->id()])) {
      into->link_list_.push_back(links_[l].impl);
      if (latency != nullptr) *latency += links_[l].latency;
    }
  }

 private:
  struct Link {
    simgrid::kernel::resource::StandardLinkImpl* impl;
    double latency;
  };
  const Topology& topology_;
  std::vector<EndpointId> gpu_of_;  // by NetPoint id
  std::vector<Link> links_;         // by LinkId
};

namespace {

std::atomic<bool> engine_taken{false};
// The factors of the message about to start (set_message_factors).
double next_latency_factor = 1.0;
double next_bandwidth_factor = 1.0;

// SimGrid's engine, configured through its command line (the only way to set options before the
// platform exists). SimGrid replaces SIGINT, SIGSEGV and SIGBUS handlers; the host program's
// are put back. Its logs are silenced: errors reach the caller as exceptions.
void start_engine(const SimgridSettings& s) {
  static std::vector<std::string> args;
  args = {"clustersim", "--log=root.thresh:critical", "--cfg=network/model:" + s.model,
          std::string("--cfg=network/crosstraffic:") + (s.crosstraffic ? "1" : "0"),
          "--cfg=debug/clean-atexit:0"};
  static std::vector<char*> argv;
  argv.clear();
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  struct sigaction old_int {
  }, old_segv{}, old_bus{};
  sigaction(SIGINT, nullptr, &old_int);
  sigaction(SIGSEGV, nullptr, &old_segv);
  sigaction(SIGBUS, nullptr, &old_bus);
  new s4u::Engine(&argc, argv.data());  // lives until the process ends
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGSEGV, &old_segv, nullptr);
  sigaction(SIGBUS, &old_bus, nullptr);
}

}  // namespace

Platform::Platform(const Topology& topology, const SimgridSettings& settings)
    : topology_(topology), latency_factor_(settings.latency_factor) {
  if (std::find(kSimgridModels.begin(), kSimgridModels.end(), settings.model) ==
      kSimgridModels.end())
    throw std::invalid_argument("unknown SimGrid network model '" + settings.model +
                                "'; allowed: LV08 | CM02 | IB");
  if (engine_taken.exchange(true)) {
    throw std::runtime_error(
        "the simgrid network model runs once per process: SimGrid 3.32's engine keeps its clock "
        "from one simulation to the next, so a second one here would not reproduce its own "
        "figures; run each simgrid simulation in its own process (one `clustersim run` each)");
  }
  start_engine(settings);
  default_gamma_ = gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  auto* zone = new ClusterZone(topology);  // SimGrid's root zone
  s4u::NetZone* iface = zone->get_iface();
  // The GPUs, then each GPU's host memory (Topology::host_endpoint: num_gpus() + e).
  const auto gpus = static_cast<EndpointId>(topology.num_gpus());
  hosts_.reserve(2 * topology.num_gpus());
  links_.reserve(topology.num_links());
  for (EndpointId e = 0; e < 2 * gpus; ++e) {
    s4u::Host* h = iface->create_host(
        (e < gpus ? "gpu" + std::to_string(e) : "host" + std::to_string(e - gpus)), 1e12);
    h->seal();
    zone->add_gpu(e, h);
    hosts_.push_back(h);
  }
  for (LinkId l = 0; l < topology.num_links(); ++l) {
    const LinkInfo& info = topology.link(l);
    s4u::Link* link =
        iface->create_link("l" + std::to_string(l), info.bandwidth.bytes_per_second());
    link->set_latency(info.latency.seconds());
    link->set_sharing_policy(s4u::Link::SharingPolicy::SHARED);
    link->seal();
    zone->add_link(link);
    links_.push_back(link);
  }
  iface->seal();
  // The factors are chosen per message (pipelined chunks overlap their latency, a calibration
  // profile's bandwidth depends on the size), so they come from these callbacks rather than
  // network/latency-factor and network/bandwidth-factor (SimGrid takes one or the other).
  auto* model = iface->get_network_model();
  model->set_lat_factor_cb(
      [](double, const s4u::Host*, const s4u::Host*, const std::vector<s4u::Link*>&,
         const std::unordered_set<s4u::NetZone*>&) { return next_latency_factor; });
  model->set_bw_factor_cb(
      [](double, const s4u::Host*, const s4u::Host*, const std::vector<s4u::Link*>&,
         const std::unordered_set<s4u::NetZone*>&) { return next_bandwidth_factor; });
}

void Platform::set_message_factors(double latency, double bandwidth) {
  next_latency_factor = latency;
  next_bandwidth_factor = bandwidth;
}

bool Platform::bound_next_message(std::span<const LinkId> route, double bytes_per_second) {
  double gamma = default_gamma_;
  bool bounded = false;
  if (bytes_per_second > 0.0) {
    // The route's latency as SimGrid sums it (ClusterZone::get_local_route, in route order).
    double latency = 0.0;
    for (LinkId l : route)
      latency += links_[l]->get_latency();
    if (latency > 0.0) {
      // SimGrid bounds the message's share of its links at gamma / (2 × latency), and the message
      // progresses at that share × its bandwidth factor: the share is bounded at cap / factor.
      const double wanted = 2.0 * latency * bytes_per_second / next_bandwidth_factor;
      gamma = default_gamma_ > 0.0 ? std::min(default_gamma_, wanted) : wanted;
      bounded = true;
    }
  }
  if (gamma != gamma_) {
    simgrid::config::set_value<double>("network/TCP-gamma", gamma);
    gamma_ = gamma;
  }
  return bounded;
}

double Platform::message_latency(EndpointId src, EndpointId dst) const {
  return topology_.route_latency(src, dst).seconds() * latency_factor_;
}

double Platform::link_usage(LinkId l) const {
  return links_[l]->get_usage();
}

double Platform::clock() {
  return s4u::Engine::get_clock();
}

// As SimGrid's own EngineImpl::solve() looks for the next event: the smallest non-negative
// delay over the models that can compute it without moving (all but ns-3, which is not used).
double Platform::next_event_delay() {
  const double now = clock();
  double delay = -1.0;
  for (simgrid::kernel::resource::Model* m : s4u::Engine::get_instance()->get_all_models()) {
    if (!m->next_occurring_event_is_idempotent()) continue;
    const double d = m->next_occurring_event(now);
    if (d >= 0.0 && (delay < 0.0 || d < delay)) delay = d;
  }
  return delay;
}

// At the current date too: SimGrid then handles the events due now (a zero-length step).
void Platform::run_until(double date) {
  if (date >= clock()) s4u::Engine::get_instance()->run_until(date);
}

}  // namespace clustersim::engine::detail::sg
