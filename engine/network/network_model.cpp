// The model factory and the ideal model (communication is free).
#include "engine/network/network_model.hpp"

#include <atomic>
#include <stdexcept>

#include "engine/network/model_parts.hpp"

namespace clustersim::engine {

namespace detail {

namespace {
// Distinct ids for every PhaseRoutes of the process (models may run on several threads).
std::atomic<std::uint32_t> next_phase_routes_id{0};
}  // namespace

PhaseRoutes::PhaseRoutes(const Topology& topology)
    : topology_(topology), id_(next_phase_routes_id.fetch_add(1, std::memory_order_relaxed)) {}

const PhaseRoutes::Phases& PhaseRoutes::look_up(const TransferPlan& plan) {
  const auto [at, added] = index_.try_emplace(&plan, static_cast<std::uint32_t>(known_.size()));
  if (added) known_.push_back({&plan, {}});
  plan.route_slot.set(id_, at->second);
  Phases& phases = known_[at->second].phases;
  bool same = phases.size() == plan.phases.size();
  for (std::size_t p = 0; same && p < phases.size(); ++p) {
    const std::vector<FlowSpec>& flows = plan.phases[p].flows;
    same = phases[p].size() == flows.size();
    for (std::size_t i = 0; same && i < flows.size(); ++i)
      same = phases[p][i].src == flows[i].src && phases[p][i].dst == flows[i].dst;
  }
  if (!same) {
    phases.assign(plan.phases.size(), {});
    for (std::size_t p = 0; p < phases.size(); ++p)
      for (const FlowSpec& f : plan.phases[p].flows)
        phases[p].push_back(
            {f.src, f.dst, topology_.route(f.src, f.dst), topology_.route_bandwidth(f.src, f.dst)});
  }
  return phases;
}

void add_plan_link_bytes(PhaseRoutes& routes, const TransferPlan& plan, double payload_bytes,
                         std::vector<double>& link_bytes) {
  const PhaseRoutes::Phases& phases = routes.of(plan);
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const std::vector<PhaseRoutes::Flow>& flows = phases[p];
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const double bytes = plan.phases[p].flows[i].bytes_per_payload_byte * payload_bytes;
      for (LinkId l : flows[i].route)
        link_bytes[l] += bytes;
    }
  }
}

namespace {

// Every transfer completes at its start time; links still count the bytes they would carry.
class IdealModel final : public NetworkModel {
 public:
  explicit IdealModel(const Topology& topology)
      : routes_(topology), link_bytes_(topology.num_links(), 0.0) {}

  std::string_view name() const override { return "ideal"; }
  void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) override {
    add_plan_link_bytes(routes_, plan, payload_bytes, link_bytes_);
    queue_.push(now, id);
  }
  Time next_event_time() const override {
    return queue_.empty() ? Time::max() : queue_.next_time();
  }
  void advance(Time t, std::vector<TransferId>& completed) override {
    const auto begin = static_cast<std::ptrdiff_t>(completed.size());
    while (!queue_.empty() && queue_.next_time() <= t)
      completed.push_back(queue_.pop().payload);
    std::sort(completed.begin() + begin, completed.end());
  }
  const std::vector<double>& link_bytes() const override { return link_bytes_; }
  // No link ever carries a rate: the bytes move in zero time.
  void set_link_rate_sink(LinkRateSink) override {}

 private:
  PhaseRoutes routes_;
  std::vector<double> link_bytes_;
  EventQueue<TransferId> queue_;
};

}  // namespace

std::unique_ptr<NetworkModel> make_ideal_model(const Topology& topology) {
  return std::make_unique<IdealModel>(topology);
}

}  // namespace detail

namespace {

std::unique_ptr<NetworkModel> make_ideal(const Topology& topology, const CollectiveProfile*,
                                         const NetworkOptions&) {
  return detail::make_ideal_model(topology);
}
std::unique_ptr<NetworkModel> make_analytical(const Topology& topology,
                                              const CollectiveProfile* profile,
                                              const NetworkOptions&) {
  return detail::make_analytical_model(topology, profile);
}
std::unique_ptr<NetworkModel> make_flow(const Topology& topology, const CollectiveProfile* profile,
                                        const NetworkOptions&) {
  return detail::make_flow_model(topology, profile);
}

constexpr NetworkModelEntry kModels[] = {
    {"analytical",
     "alpha + bytes x bus factor / bus bandwidth per collective; no contention (fastest)",
     &make_analytical, /*contention_free=*/true},
    {"flow", "flows on their routes sharing every link max-min fairly (default)", &make_flow},
    {"ideal", "communication takes no time (a bound)", &make_ideal, /*contention_free=*/true},
#ifdef CLUSTERSIM_HAVE_SIMGRID
    {"simgrid",
     "each collective's per-step messages in SimGrid's engine (slowest; once per process)",
     &detail::make_simgrid_model, /*contention_free=*/false, /*once_per_process=*/true},
#endif
};

}  // namespace

std::span<const NetworkModelEntry> network_models() {
  return kModels;
}

const NetworkModelEntry* find_network_model(std::string_view name) {
  for (const auto& m : kModels)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> network_model_names() {
  std::vector<std::string> names;
  for (const auto& m : kModels)
    names.emplace_back(m.name);
  return names;
}

std::unique_ptr<NetworkModel> make_network_model(std::string_view name, const Topology& topology,
                                                 const CollectiveProfile* profile,
                                                 const NetworkOptions& options) {
  const NetworkModelEntry* m = find_network_model(name);
  if (m == nullptr) {
    std::string allowed;
    for (const auto& n : network_model_names())
      allowed += (allowed.empty() ? "" : " | ") + n;
    throw std::invalid_argument("unknown network model '" + std::string(name) +
                                "'; allowed: " + allowed);
  }
  return m->make(topology, profile, options);
}

}  // namespace clustersim::engine
