// Flow model: every flow of a running phase is a fluid flow on its route, and links are shared
// max-min fairly (progressive filling). Rates are recomputed once per timestamp, and only for the
// connected component of links and flows that a start or finish touched.
//
// A collective a calibration profile covers keeps its algorithm's flows (so it loads the links
// it really uses and competes there), but all its phases run at once after the profile's α and
// each flow is capped at bytes / D with D = S·factor / busbw: uncontended, every flow ends at
// α + D, the profile's time. Where the topology's links could not carry those caps (a measured
// busbw above the scenario's link bandwidth, e.g. in-network reduction), the flows carry
// proportionally fewer simulated bytes so the uncontended time still matches; link byte counters
// keep the physical bytes. docs/calibration.md "Using a profile".
#include <array>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/network/link_flows.hpp"
#include "engine/network/model_parts.hpp"

namespace clustersim::engine::detail {

namespace {

// Longest route a flow may take (a three-level fat tree through PCIe needs about 10 links).
constexpr std::size_t kMaxHops = 16;

struct FlowState {
  std::array<LinkId, kMaxHops> links{};
  std::array<std::uint32_t, kMaxHops> pos{};  // index of this flow in each link's flow list
  double bytes = 0.0;                         // simulated bytes
  double physical = 0.0;                      // bytes the links are credited with when it ends
  double cap = 0.0;                           // rate limit in bytes/s; 0 = none
  double narrowest = 0.0;  // its route's narrowest link, bytes/s (Topology::route_bandwidth)
  double remaining = 0.0;  // as of `last`
  double rate = 0.0;       // bytes/s
  double new_rate = 0.0;
  Time last;
  std::uint32_t transfer = 0;
  std::uint32_t version = 0;  // bumped whenever the pending completion event becomes stale
  std::uint32_t seen = 0;     // epoch of the last component search that reached it
  std::uint32_t frozen = 0;   // epoch in which progressive filling fixed its rate
  std::uint8_t hops = 0;
  bool active = false;
};

struct TransferState {
  TransferId id = 0;
  const TransferPlan* plan = nullptr;
  const PhaseRoutes::Phases* routes = nullptr;  // the plan's, looked up once at its start
  double payload = 0.0;
  std::uint32_t phase = 0;
  std::uint32_t flows_left = 0;
  // Profiled transfers only: all phases at once, simulated bytes = physical × byte_scale, each
  // flow's rate capped at simulated bytes × inv_duration.
  bool profiled = false;
  double byte_scale = 1.0;
  double inv_duration = 0.0;
};

struct Event {
  enum Kind : std::uint8_t { phase_start, flow_done, transfer_done } kind;
  std::uint32_t target;  // transfer slot, or batch slot for flow_done
};

// A flow whose completion is due, valid while the flow's version is unchanged.
struct DueFlow {
  std::uint32_t flow;
  std::uint32_t version;
};

// A bottleneck candidate of progressive filling: a link's fair share or a capped flow's cap.
struct FillEntry {
  double share;
  std::uint32_t index;  // LinkId, or flow slot when is_flow
  bool is_flow;
};

class FlowModel final : public NetworkModel {
 public:
  FlowModel(const Topology& topology, const CollectiveProfile* profile)
      : topology_(topology),
        profile_(profile),
        links_(topology.num_links()),
        link_bytes_(topology.num_links(), 0.0),
        reported_(topology.num_links(), 0.0),
        cap_(topology.num_links(), 0.0),
        cnt_(topology.num_links(), 0),
        queued_(topology.num_links(), 0.0),
        demand_(topology.num_links(), 0.0) {}

  std::string_view name() const override { return "flow"; }

  void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) override {
    const std::uint32_t slot = pool_alloc(transfers_, free_transfers_);
    transfers_[slot] =
        TransferState{id, &plan, &routes_.of(plan), payload_bytes, 0, 0, false, 1.0, 0.0};
    // Flows join in advance(), so transfers started at one time share one recomputation.
    if (const auto cost = profile_.find(plan, payload_bytes)) {
      start_profiled(slot, *cost, now);
    } else if (plan.phases.empty()) {
      push(now, {Event::transfer_done, slot});
    } else {
      push(now + plan.phases.front().latency_for(payload_bytes), {Event::phase_start, slot});
    }
  }

  Time next_event_time() const override {
    return queue_.empty() ? Time::max() : queue_.next_time();
  }

  void advance(Time t, std::vector<TransferId>& completed) override {
    const auto begin = static_cast<std::ptrdiff_t>(completed.size());
    while (!queue_.empty() && queue_.next_time() <= t) {
      const Event e = queue_.pop().payload;
      switch (e.kind) {
        case Event::flow_done:
          // The batch's flows in the order they were pushed, as their own events would pop.
          for (const DueFlow& d : batches_[e.target])
            if (d.version == flows_[d.flow].version) finish_flow(d.flow, t, completed);
          free_batch(e.target);
          break;
        case Event::phase_start:
          --pending_;
          start_phase(e.target, t, completed);
          break;
        case Event::transfer_done:
          --pending_;
          completed.push_back(transfers_[e.target].id);
          free_transfers_.push_back(e.target);
          break;
      }
    }
    recompute(t);
    drop_stale();
    std::sort(completed.begin() + begin, completed.end());
  }

  const std::vector<double>& link_bytes() const override { return link_bytes_; }
  void set_link_rate_sink(LinkRateSink sink) override { sink_ = std::move(sink); }
  std::vector<ProfileUse> profile_uses() const override { return profile_.uses(); }

 private:
  // See the file comment. byte_scale = 1/k, k = the largest ratio over the plan's links of the
  // capped rates' sum to the link's bandwidth (at least 1); independent of the payload size.
  void start_profiled(std::uint32_t slot, const ProfiledCost& cost, Time now) {
    TransferState& tr = transfers_[slot];
    tr.profiled = true;
    const double duration = tr.payload * cost.bus_factor / cost.busbw;
    tr.inv_duration = duration > 0.0 ? 1.0 / duration : 0.0;
    double k = 1.0;
    for (const Phase& phase : tr.plan->phases) {
      for (const FlowSpec& f : phase.flows) {
        const double rate = f.bytes_per_payload_byte * tr.payload * tr.inv_duration;
        if (rate <= 0.0) continue;
        for (LinkId l : topology_.route(f.src, f.dst)) {
          if (demand_[l] == 0.0) demand_links_.push_back(l);
          demand_[l] += rate;
        }
      }
    }
    for (LinkId l : demand_links_) {
      k = std::max(k, demand_[l] / topology_.link(l).bandwidth.bytes_per_second());
      demand_[l] = 0.0;
    }
    demand_links_.clear();
    tr.byte_scale = 1.0 / k;
    push(now + Time::from_seconds(cost.alpha_s), {Event::phase_start, slot});
  }

  void push(Time t, Event e) {
    if (e.kind != Event::flow_done) ++pending_;
    queue_.push(t, e);
  }

  bool valid(const Event& e) const {
    if (e.kind != Event::flow_done) return true;
    for (const DueFlow& d : batches_[e.target])
      if (d.version == flows_[d.flow].version) return true;
    return false;
  }

  void free_batch(std::uint32_t b) {
    batches_[b].clear();
    free_batches_.push_back(b);
  }

  // Keeps the heap's top valid (next_event_time() is const) and its stale share bounded.
  void drop_stale() {
    if (queue_.size() > 64 && queue_.size() > 4 * (active_flows_ + pending_)) {
      queue_.compact([this](const Event& e) {
        if (valid(e)) return true;
        free_batch(e.target);
        return false;
      });
    }
    while (!queue_.empty() && !valid(queue_.top().payload))
      free_batch(queue_.pop().payload.target);
  }

  // A link whose flow set changed joins the next recomputation's component: marked with that
  // search's epoch and queued as its first links, so the search need not copy a dirty list.
  void mark_dirty(LinkId l) {
    LinkFlows& link = links_[l];
    if (link.seen == epoch_ + 1) return;
    link.seen = epoch_ + 1;
    comp_links_.push_back(l);
  }

  // The phase's latency has elapsed: its non-empty flows join the network (a profiled
  // transfer's flows of every phase).
  void start_phase(std::uint32_t slot, Time t, std::vector<TransferId>& completed) {
    TransferState& tr = transfers_[slot];
    const auto& phases = tr.plan->phases;
    const std::size_t last = tr.profiled ? phases.size() : tr.phase + 1;
    for (std::size_t p = tr.phase; p < last; ++p) {
      const std::vector<PhaseRoutes::Flow>& routes = (*tr.routes)[p];
      const double rate_cap = tr.profiled ? 0.0 : phases[p].rate_cap_for(tr.payload);
      for (std::size_t i = 0; i < phases[p].flows.size(); ++i) {
        const FlowSpec& f = phases[p].flows[i];
        const double bytes = f.bytes_per_payload_byte * tr.payload;
        const std::span<const LinkId> route = routes[i].route;
        if (bytes <= 0.0 || route.empty()) continue;
        const double simulated = bytes * tr.byte_scale;
        // Profiled: the profile's rate; otherwise the phase's protocol/algorithm limit, if any.
        const double cap =
            tr.profiled ? simulated * tr.inv_duration : f.bytes_per_payload_byte * rate_cap;
        add_flow(slot, routes[i], simulated, bytes, cap, t);
        ++tr.flows_left;
      }
    }
    if (tr.flows_left == 0) next_phase(slot, t, completed);
  }

  void next_phase(std::uint32_t slot, Time t, std::vector<TransferId>& completed) {
    TransferState& tr = transfers_[slot];
    if (tr.profiled || ++tr.phase == tr.plan->phases.size()) {
      completed.push_back(tr.id);
      free_transfers_.push_back(slot);
      return;
    }
    push(t + tr.plan->phases[tr.phase].latency_for(tr.payload), {Event::phase_start, slot});
  }

  // Out of line and cold, so that add_flow (17.9 M calls at 16,384 GPUs) inlines into
  // start_phase without the message's string code.
  [[noreturn, gnu::cold, gnu::noinline]] static void route_too_long(std::size_t links) {
    throw std::runtime_error("flow model: a route of " + std::to_string(links) +
                             " links exceeds the supported maximum of " + std::to_string(kMaxHops));
  }

  void add_flow(std::uint32_t transfer, const PhaseRoutes::Flow& path, double bytes,
                double physical, double cap, Time t) {
    const std::span<const LinkId> route = path.route;
    if (route.size() > kMaxHops) route_too_long(route.size());
    const std::uint32_t i = pool_alloc(flows_, free_flows_);
    FlowState& f = flows_[i];
    f.hops = static_cast<std::uint8_t>(route.size());
    f.bytes = f.remaining = bytes;
    f.physical = physical;
    f.cap = cap;
    f.narrowest = path.narrowest.bytes_per_second();
    f.rate = 0.0;
    f.last = t;
    f.transfer = transfer;
    f.active = true;
    for (std::size_t h = 0; h < route.size(); ++h) {
      const LinkId l = route[h];
      LinkFlows& link = links_[l];
      f.links[h] = l;
      f.pos[h] = link.size();
      link.push_back(i);
      mark_dirty(l);  // the same record: no further miss
    }
    ++active_flows_;
  }

  void finish_flow(std::uint32_t i, Time t, std::vector<TransferId>& completed) {
    FlowState& f = flows_[i];
    for (std::size_t h = 0; h < f.hops; ++h) {
      const LinkId l = f.links[h];
      link_bytes_[l] += f.physical;
      // Swap-remove, then tell the moved flow where it now sits in this link's list.
      LinkFlows& list = links_[l];
      const std::uint32_t moved = list.back();
      list.set(f.pos[h], moved);
      list.pop_back();
      if (moved != i) {
        FlowState& m = flows_[moved];
        for (std::size_t k = 0; k < m.hops; ++k) {
          if (m.links[k] == l) m.pos[k] = f.pos[h];
        }
      }
      // A link left without flows has no rates to recompute (a ring's links as it ends): it
      // joins the component only for the sink, which reports its rate falling to 0.
      if (list.size() > 0 || sink_) mark_dirty(l);
    }
    f.active = false;
    ++f.version;
    --active_flows_;
    free_flows_.push_back(i);
    if (--transfers_[f.transfer].flows_left == 0) next_phase(f.transfer, t, completed);
  }

  // Max-min fair rates for every flow connected to a link whose flow set changed.
  void recompute(Time t) {
    if (comp_links_.empty()) return;
    ++epoch_;
    const bool shared = collect_component();
    if (shared) {
      fill();
    } else {
      fill_unshared();
    }
    // Completions due at one instant, pushed one after another, share one event (a batch):
    // with consecutive sequence numbers nothing could pop between them, so the batch pops
    // where the first would and runs them in order. A ring's flows all end together: one
    // heap entry instead of one per flow.
    std::uint32_t batch = kNoBatch;
    Time batch_time;
    for (std::uint32_t i : comp_flows_) {
      FlowState& f = flows_[i];
      if (f.new_rate == f.rate) continue;  // its completion event still holds
      f.remaining = std::max(0.0, f.remaining - f.rate * (t - f.last).seconds());
      f.last = t;
      f.rate = f.new_rate;
      ++f.version;
      if (f.rate <= 0.0) {
        throw std::runtime_error("flow model: a flow got no bandwidth on link " +
                                 std::to_string(f.links[0]) + " (zero-bandwidth link?)");
      }
      const Time d = transfer_time(f.remaining, Bandwidth::bytes_per_second(f.rate));
      const Time due = t + std::max(d, Time::from_ps(1));
      if (batch == kNoBatch || due != batch_time) {
        batch = pool_alloc(batches_, free_batches_);
        batch_time = due;
        queue_.push(due, {Event::flow_done, batch});
      }
      batches_[batch].push_back({i, f.version});
    }
    if (sink_) {
      for (LinkId l : comp_links_) {
        double sum = 0.0;
        for (std::uint32_t i : links_[l])
          sum += flows_[i].rate;
        if (sum != reported_[l]) sink_(l, t, sum);
        reported_[l] = sum;
      }
    }
    comp_links_.clear();
  }

  // Breadth-first over link -> flows on it -> their links, from the dirty links (comp_links_'s
  // first entries, marked by mark_dirty). Returns whether some link carries two flows or more.
  bool collect_component() {
    comp_flows_.clear();
    bool shared = false;
    for (std::size_t q = 0; q < comp_links_.size(); ++q) {
      const LinkFlows& link = links_[comp_links_[q]];
      shared |= link.size() > 1;
      for (std::uint32_t i : link) {
        FlowState& f = flows_[i];
        if (f.seen == epoch_) continue;
        f.seen = epoch_;
        comp_flows_.push_back(i);
        for (std::size_t h = 0; h < f.hops; ++h) {
          const LinkId l = f.links[h];
          if (links_[l].seen == epoch_) continue;
          links_[l].seen = epoch_;
          comp_links_.push_back(l);
        }
      }
    }
    return shared;
  }

  // The fast path: when no link of the component carries two flows (a TP ring inside an
  // NVSwitch node, a lone send), each flow's max-min rate is simply its narrowest link or its
  // cap, whichever is smaller: exactly what progressive filling would fix it at, without the
  // heap. For a component whose links carry one flow each (collect_component() says so).
  void fill_unshared() {
    for (std::uint32_t i : comp_flows_) {
      FlowState& f = flows_[i];
      // The narrowest link was found with the route (the same minimum over the same links),
      // so the links' records need not be read again.
      const double cap = f.cap > 0.0 ? f.cap : std::numeric_limits<double>::infinity();
      const double rate = std::min(cap, f.narrowest);
      f.frozen = epoch_;
      f.new_rate = rate;
    }
  }

  double share(LinkId l) const { return std::max(cap_[l], 0.0) / static_cast<double>(cnt_[l]); }

  // Progressive filling: the smallest of the links' fair shares and the flows' caps is the
  // bottleneck; fix the flows it limits at that rate, take it off their links, repeat.
  //
  // A link's entry is pushed again only when its share falls below the key it was last pushed
  // with (queued_), or when that entry pops with a share grown since: fixing a flow at the
  // bottleneck's share mostly raises the shares of its other links, and pushing each of them
  // anew was most of the heap's work. The invariant (every link with unfixed flows has an entry
  // keyed at most its share, keyed queued_ <= share) makes a popped entry whose key is its link's
  // share the smallest of all shares, ties by index: the same bottleneck, in the same order, as
  // pushing at every change would give, so every rate is the same double.
  void fill() {
    const FillLater later;
    fill_heap_.clear();
    for (LinkId l : comp_links_) {
      cap_[l] = topology_.link(l).bandwidth.bytes_per_second();
      cnt_[l] = links_[l].size();
      if (cnt_[l] == 0) continue;
      if (cnt_[l] == 1) {
        // A link of one flow can fix only that flow, at its bandwidth; a narrower link (whose
        // share is at most its bandwidth) or a lower cap has a smaller key and fixes it first.
        const FlowState& f = flows_[links_[l][0]];
        if (cap_[l] > f.narrowest || (f.cap > 0.0 && cap_[l] > f.cap)) continue;
      }
      queued_[l] = share(l);
      fill_heap_.push_back({queued_[l], l, false});
    }
    // A cap no lower than the flow's narrowest link never binds: that link's share is at most
    // its bandwidth, so its entry pops first (links before caps on ties) and fixes the flow.
    for (std::uint32_t i : comp_flows_) {
      const FlowState& f = flows_[i];
      if (f.cap > 0.0 && f.cap < f.narrowest) fill_heap_.push_back({f.cap, i, true});
    }
    std::make_heap(fill_heap_.begin(), fill_heap_.end(), later);
    // Once every flow is fixed, what is left in the heap is links without unfixed flows and
    // fixed flows' caps, all of which would be skipped: stop there.
    unfixed_ = comp_flows_.size();
    while (unfixed_ > 0 && !fill_heap_.empty()) {
      std::pop_heap(fill_heap_.begin(), fill_heap_.end(), later);
      const FillEntry e = fill_heap_.back();
      fill_heap_.pop_back();
      if (e.is_flow) {
        if (flows_[e.index].frozen != epoch_) freeze(e.index, e.share, kNoLink);
        continue;
      }
      const LinkId l = e.index;
      if (cnt_[l] == 0) continue;  // every flow on it is fixed
      const double s = share(l);
      if (e.share != s) {
        // The link's latest entry, its share grown since: queue it at its share. An older
        // entry (a smaller share was pushed after it) is dropped: the latest is still queued.
        if (e.share == queued_[l]) push_link(l, s);
        continue;
      }
      for (std::uint32_t i : links_[l]) {
        if (flows_[i].frozen != epoch_) freeze(i, e.share, l);
      }
    }
  }

  void push_link(LinkId l, double s) {
    queued_[l] = s;
    fill_heap_.push_back({s, l, false});
    std::push_heap(fill_heap_.begin(), fill_heap_.end(), FillLater{});
  }

  // Heap order: smallest share first; ties: links before caps, then by index (deterministic).
  static bool fill_later(const FillEntry& a, const FillEntry& b) {
    if (a.share != b.share) return a.share > b.share;
    return a.is_flow != b.is_flow ? a.is_flow : a.index > b.index;
  }
  // As a function object the heap algorithms inline it.
  struct FillLater {
    bool operator()(const FillEntry& a, const FillEntry& b) const { return fill_later(a, b); }
  };
  static constexpr std::uint32_t kNoLink = ~std::uint32_t{0};
  static constexpr std::uint32_t kNoBatch = ~std::uint32_t{0};

  // Fixes flow i at `rate` and updates the shares of its links other than `bottleneck`.
  void freeze(std::uint32_t i, double rate, std::uint32_t bottleneck) {
    FlowState& f = flows_[i];
    f.frozen = epoch_;
    f.new_rate = rate;
    --unfixed_;
    for (std::size_t h = 0; h < f.hops; ++h) {
      const LinkId l = f.links[h];
      cap_[l] -= rate;
      if (--cnt_[l] > 0 && l != bottleneck) {
        // A share only falls below its queued key by rounding (cap − rate over one flow fewer).
        if (const double s = share(l); s < queued_[l]) push_link(l, s);
      }
    }
  }

  const Topology& topology_;
  ProfileLookup profile_;
  std::vector<FlowState> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<TransferState> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<LinkFlows> links_;  // active flows on each link, and its marks
  std::vector<double> link_bytes_;
  std::vector<double> reported_;
  EventQueue<Event> queue_;
  std::vector<std::vector<DueFlow>> batches_;  // flow_done events' flows, by batch slot
  std::vector<std::uint32_t> free_batches_;
  std::size_t active_flows_ = 0;
  std::size_t pending_ = 0;  // phase_start and transfer_done events in the queue
  LinkRateSink sink_;

  // Reused work buffers: nothing below allocates once they have grown.
  std::vector<double> cap_;
  std::vector<std::uint32_t> cnt_;
  std::vector<double> queued_;      // fill(): the key of each link's latest heap entry
  std::vector<LinkId> comp_links_;  // the dirty links, then the rest of their component
  std::vector<std::uint32_t> comp_flows_;
  std::vector<FillEntry> fill_heap_;
  std::size_t unfixed_ = 0;     // fill(): flows of the component not yet fixed
  std::vector<double> demand_;  // start_profiled's per-link sum of capped rates
  PhaseRoutes routes_{topology_};
  std::vector<LinkId> demand_links_;
  std::uint32_t epoch_ = 0;
};

}  // namespace

std::unique_ptr<NetworkModel> make_flow_model(const Topology& topology,
                                              const CollectiveProfile* profile) {
  return std::make_unique<FlowModel>(topology, profile);
}

}  // namespace clustersim::engine::detail
