// Analytical model: no contention. A transfer lasts Σ over phases of (latency + the slowest
// flow's bytes / its route's narrowest bandwidth); one completion event per transfer. A collective
// a calibration profile covers lasts exactly α + S·factor / busbw instead.
#include <algorithm>

#include "engine/network/model_parts.hpp"

namespace clustersim::engine::detail {

namespace {

class AnalyticalModel final : public NetworkModel {
 public:
  AnalyticalModel(const Topology& topology, const CollectiveProfile* profile)
      : topology_(topology),
        routes_(topology),
        profile_(profile),
        link_bytes_(topology.num_links(), 0.0),
        rate_(topology.num_links(), 0.0),
        active_(topology.num_links(), 0),
        reported_(topology.num_links(), 0.0),
        touched_mark_(topology.num_links(), 0) {}

  std::string_view name() const override { return "analytical"; }

  void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) override {
    if (const auto cost = profile_.find(plan, payload_bytes)) {
      start_profiled(id, plan, payload_bytes, now, *cost);
      return;
    }
    Time t = now;
    const PhaseRoutes::Phases& plan_routes = routes_.of(plan);
    for (std::size_t p = 0; p < plan.phases.size(); ++p) {
      const Phase& phase = plan.phases[p];
      t += phase.latency_for(payload_bytes);
      Time longest = Time::zero();
      const std::vector<PhaseRoutes::Flow>& routes = plan_routes[p];
      for (std::size_t i = 0; i < phase.flows.size(); ++i) {
        const FlowSpec& f = phase.flows[i];
        const double bytes = f.bytes_per_payload_byte * payload_bytes;
        if (bytes <= 0.0 || f.src == f.dst) continue;
        const Bandwidth bw = routes[i].narrowest;
        const Time d = transfer_time(bytes, bw);
        longest = std::max(longest, d);
        // Rate changes are only worth events when someone listens.
        if (sink_) {
          queue_.push(t, Event{Event::rate, id, f.src, f.dst, bw.bytes_per_second(), nullptr, 0});
          queue_.push(t + d,
                      Event{Event::rate, id, f.src, f.dst, -bw.bytes_per_second(), nullptr, 0});
        }
      }
      // The phase's protocol/algorithm limit (Phase::rate_cap) holds without contention too.
      if (const double cap = phase.rate_cap_for(payload_bytes); cap > 0.0)
        longest = std::max(longest, Time::from_seconds(payload_bytes / cap));
      t += longest;
    }
    queue_.push(t, Event{Event::done, id, 0, 0, 0.0, &plan, payload_bytes});
  }

  Time next_event_time() const override {
    return queue_.empty() ? Time::max() : queue_.next_time();
  }

  void advance(Time t, std::vector<TransferId>& completed) override {
    const auto begin = static_cast<std::ptrdiff_t>(completed.size());
    while (!queue_.empty() && queue_.next_time() <= t) {
      const Event e = queue_.pop().payload;
      if (e.kind == Event::done) {
        add_plan_link_bytes(routes_, *e.plan, e.payload, link_bytes_);
        completed.push_back(e.id);
        continue;
      }
      for (LinkId l : topology_.route(e.src, e.dst)) {
        rate_[l] += e.delta;
        active_[l] += e.delta > 0 ? 1 : -1;
        if (touched_mark_[l] == 0) {
          touched_mark_[l] = 1;
          touched_.push_back(l);
        }
      }
    }
    report(t);
    std::sort(completed.begin() + begin, completed.end());
  }

  const std::vector<double>& link_bytes() const override { return link_bytes_; }
  void set_link_rate_sink(LinkRateSink sink) override { sink_ = std::move(sink); }
  std::vector<ProfileUse> profile_uses() const override { return profile_.uses(); }

 private:
  // α, then every flow of every phase at once at the rate that ends it after S·factor/busbw: the
  // profile measured the collective as a whole, so its phases are not timed one by one.
  void start_profiled(TransferId id, const TransferPlan& plan, double payload_bytes, Time now,
                      const ProfiledCost& cost) {
    const Time t = now + Time::from_seconds(cost.alpha_s);
    const double seconds = payload_bytes * cost.bus_factor / cost.busbw;
    const Time end = t + Time::from_seconds(seconds);
    if (sink_ && seconds > 0.0) {
      for (const Phase& phase : plan.phases) {
        for (const FlowSpec& f : phase.flows) {
          const double rate = f.bytes_per_payload_byte * payload_bytes / seconds;
          if (rate <= 0.0 || f.src == f.dst) continue;
          queue_.push(t, Event{Event::rate, id, f.src, f.dst, rate, nullptr, 0});
          queue_.push(end, Event{Event::rate, id, f.src, f.dst, -rate, nullptr, 0});
        }
      }
    }
    queue_.push(end, Event{Event::done, id, 0, 0, 0.0, &plan, payload_bytes});
  }

  struct Event {
    enum Kind : std::uint8_t { done, rate } kind;
    TransferId id;
    EndpointId src, dst;
    double delta;  // rate: bytes/s added to each link of the route
    const TransferPlan* plan;
    double payload;
  };

  // One report per link whose aggregate rate changed at t, in ascending link order.
  void report(Time t) {
    std::sort(touched_.begin(), touched_.end());
    for (LinkId l : touched_) {
      touched_mark_[l] = 0;
      if (active_[l] == 0) rate_[l] = 0.0;  // no residue from adding and subtracting doubles
      if (rate_[l] != reported_[l] && sink_) sink_(l, t, rate_[l]);
      reported_[l] = rate_[l];
    }
    touched_.clear();
  }

  const Topology& topology_;
  PhaseRoutes routes_;
  ProfileLookup profile_;
  std::vector<double> link_bytes_;
  std::vector<double> rate_;
  std::vector<int> active_;
  std::vector<double> reported_;
  std::vector<std::uint8_t> touched_mark_;
  std::vector<LinkId> touched_;
  EventQueue<Event> queue_;
  LinkRateSink sink_;
};

}  // namespace

std::unique_ptr<NetworkModel> make_analytical_model(const Topology& topology,
                                                    const CollectiveProfile* profile) {
  return std::make_unique<AnalyticalModel>(topology, profile);
}

}  // namespace clustersim::engine::detail
