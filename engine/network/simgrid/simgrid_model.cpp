// The simgrid network model (docs/simgrid.md): each phase of a transfer plan
// becomes its algorithm's point-to-point messages, sent in SimGrid 3.32 on the topology's
// platform (platform.hpp) as the algorithm reaches them; SimGrid's clock says when each arrives.
//
// A phase's flows are sent as messages by one of three patterns:
//   ring     (ring and hierarchical all-reduce, all-gather, reduce-scatter, all-to-all): every flow
//            is cut into the phase's `steps` messages; a sender's step k leaves once its own step
//            k−1 is through and it has received step k−1 on every flow into it (a ring's
//            reduce-and-forward), so uncontended a ring all-reduce takes 2(n−1)·(α + S/(n·B)).
//   forward  (chains, scatter, gather, send/recv: the flows form no cycle): chunks of NCCL's size
//            (512 KiB unless the plan's pipeline says otherwise, at most 1,024 per flow); a sender
//            forwards chunk k once it has received chunk k on every flow into it.
//   stream   (all-pairs, trees both ways, NVLS): each flow streams its chunks on its own.
// A flow's chunks go one after the other (FIFO, as on one connection: concurrent chunks would
// share the link and each arrive late, stretching the pipeline's fill by the window); only the
// first pays the route's latency, the others' overlaps it (NCCL keeps 8 in flight).
// SimGrid charges every ring step and first chunk its route's latency. The rest of the latency term
// (NCCL's protocol constants, the pipeline fill: Phase::latency_for) is paid once before the phase,
// less what SimGrid already charges along the phase's critical path (steps × α for a ring, depth ×
// α for a chain, α otherwise); uncontended, the model then agrees with `flow`.
// Link counters (a trace's utilization tracks): with a LinkRateSink, each link a message crosses is
// reported with SimGrid's usage of it (s4u::Link::get_usage, bytes/s) whenever that changes, as
// the flow model reports its flows' sum.
#include <algorithm>
#include <cmath>
#include <memory>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/network/model_parts.hpp"
#include "engine/network/simgrid/platform.hpp"

namespace clustersim::engine::detail {

namespace {

namespace s4u = simgrid::s4u;

constexpr double kChunkBytes = 512.0 * 1024.0;  // NCCL Simple's chunk: 4 MiB buffer / 8 steps
constexpr std::uint32_t kMaxChunks = 1024;      // per flow and phase

enum class Pattern : std::uint8_t { ring, forward, stream };

// SimGrid's date, rounded up to the next picosecond so nothing ends early.
Time ceil_ps(double seconds) {
  const double ps = std::ceil(seconds * 1e12);
  if (!(ps < 9.2e18)) return Time::end_of_clock();
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

struct FlowRun {
  std::uint32_t src = 0;  // local endpoint indices (TransferState::endpoints)
  std::uint32_t dst = 0;
  double bytes = 0.0;
  // The phase's protocol/algorithm limit for this flow (Phase::rate_cap × its bytes per payload
  // byte), 0 for none. SimGrid's solver bounds each message at it; where it cannot (a route
  // without latency: Platform::bound_next_message), the messages are paced instead: the next
  // may not start before `next_send`.
  double rate_cap = 0.0;
  bool solver_bound = false;  // SimGrid bounds this flow's messages at rate_cap
  Time next_send;
  bool paced = false;      // a pacing timer is pending
  std::uint32_t sent = 0;  // messages issued
  std::uint32_t done = 0;  // messages arrived
  std::span<const LinkId> route;
};

struct TransferState {
  TransferId id = 0;
  const TransferPlan* plan = nullptr;
  double payload = 0.0;
  std::uint32_t phase = 0;
  // The running phase.
  Pattern pattern = Pattern::ring;
  std::uint32_t messages = 1;  // per flow, sent one after the other
  std::uint32_t flows_left = 0;
  std::vector<EndpointId> endpoints;  // sorted
  std::vector<FlowRun> flows;
  std::vector<std::vector<std::uint32_t>> in, out;  // per local endpoint: flow indices
};

struct Message {
  s4u::CommPtr comm;  // alive until it completes (SimGrid's requirement)
  std::uint64_t sequence = 0;
  std::uint32_t transfer = 0;
  std::uint32_t flow = 0;
};

class SimgridModel;
SimgridModel* active_model = nullptr;  // the one model of the process whose messages complete

class SimgridModel final : public NetworkModel {
 public:
  SimgridModel(const Topology& topology, const CollectiveProfile* profile,
               const SimgridSettings& settings)
      : topology_(topology),
        platform_(topology, settings),
        latency_factor_(settings.latency_factor),
        bandwidth_factor_(settings.bandwidth_factor),
        link_bytes_(topology.num_links(), 0.0) {
    if (profile != nullptr) {
      intra_fit_ = profile->lookup(CollectiveType::send_recv, GroupShape{2, 1}).fit;
      inter_fit_ = profile->lookup(CollectiveType::send_recv, GroupShape{2, 2}).fit;
    }
    active_model = this;
    s4u::Activity::on_completion_cb([](const s4u::Activity& a) {
      if (active_model != nullptr) active_model->arrived(a);
    });
  }
  ~SimgridModel() override {
    active_model = nullptr;
    // Messages still in flight (a cancelled run) must outlive SimGrid's engine, which never ends.
    static auto* orphans = new std::vector<s4u::CommPtr>;
    for (Message& m : messages_)
      if (m.comm) orphans->push_back(std::move(m.comm));
  }

  std::string_view name() const override { return "simgrid"; }

  void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) override {
    now_ = now;
    sg::Platform::run_until(now.seconds());
    const std::uint32_t slot = pool_alloc(transfers_, free_transfers_);
    TransferState& tr = transfers_[slot];
    tr.id = id;
    tr.plan = &plan;
    tr.payload = payload_bytes;
    tr.phase = 0;
    begin_phase(slot, now);
  }

  Time next_event_time() const override {
    Time t = std::min(timers_.next_time(), paced_.next_time());
    if (!arrived_.empty() || !finished_.empty()) t = now_;
    if (in_flight_ > 0) {
      const double delay = sg::Platform::next_event_delay();
      if (delay < 0.0) {
        throw std::runtime_error(
            "simgrid model: messages are in flight but SimGrid has no next event (a link of zero "
            "bandwidth on their route?)");
      }
      t = std::min(t, std::max(now_, ceil_ps(sg::Platform::clock() + delay)));
    }
    // SimGrid has just solved its sharing (next_event_delay), so the links' usage is current.
    if (sink_) report_link_rates();
    return t;
  }

  void advance(Time t, std::vector<TransferId>& completed) override {
    // SimGrid reporting an event it then never handles would loop forever; say so instead.
    stalls_ = t == now_ && arrived_.empty() && finished_.empty() && timers_.next_time() > t &&
                      paced_.next_time() > t
                  ? stalls_ + 1
                  : 0;
    if (stalls_ > 1000)
      throw std::runtime_error(
          "simgrid model: SimGrid made no progress at t = " + std::to_string(t.seconds()) + " s");
    now_ = t;
    run_to(t);
    // Arrivals in the order they were sent (SimGrid reports simultaneous ones in its own order).
    while (!arrived_.empty()) {
      std::vector<std::uint32_t> batch;
      batch.swap(arrived_);
      std::sort(batch.begin(), batch.end(), [this](std::uint32_t a, std::uint32_t b) {
        return messages_[a].sequence < messages_[b].sequence;
      });
      for (std::uint32_t m : batch)
        delivered(m, t);
    }
    while (!timers_.empty() && timers_.next_time() <= t)
      send_phase(timers_.pop().payload);
    while (!paced_.empty() && paced_.next_time() <= t) {
      const std::uint64_t key = paced_.pop().payload;
      const auto slot = static_cast<std::uint32_t>(key >> 32);
      const auto f = static_cast<std::uint32_t>(key);
      transfers_[slot].flows[f].paced = false;
      try_send(slot, f);
    }
    const auto begin = static_cast<std::ptrdiff_t>(completed.size());
    completed.insert(completed.end(), finished_.begin(), finished_.end());
    finished_.clear();
    std::sort(completed.begin() + begin, completed.end());
  }

  const std::vector<double>& link_bytes() const override { return link_bytes_; }
  // Each link's rate as SimGrid's solver shares it (docs/simgrid.md): reported
  // from next_event_time(), after SimGrid solved the messages started or ended since.
  void set_link_rate_sink(LinkRateSink sink) override {
    sink_ = std::move(sink);
    link_messages_.assign(topology_.num_links(), 0);
    reported_rate_.assign(topology_.num_links(), 0.0);
    watching_.assign(topology_.num_links(), 0);
    watched_.clear();
  }

 private:
  // The rate of every link that carries a message or was last reported busy, when it changed:
  // SimGrid's usage of the link (the sum of its messages' shares), 0 once none crosses it.
  void report_link_rates() const {
    std::size_t kept = 0;
    for (const LinkId l : watched_) {
      const double rate = link_messages_[l] > 0 ? platform_.link_usage(l) : 0.0;
      if (rate != reported_rate_[l]) {
        sink_(l, now_, rate);
        reported_rate_[l] = rate;
      }
      if (link_messages_[l] > 0 || rate != 0.0)
        watched_[kept++] = l;
      else
        watching_[l] = 0;
    }
    watched_.resize(kept);
  }

  // Counts a message on (+1) or off (−1) the links of its route, for report_link_rates().
  void count_on_links(std::span<const LinkId> route, int delta) {
    if (!sink_) return;
    for (const LinkId l : route) {
      link_messages_[l] = static_cast<std::uint32_t>(static_cast<int>(link_messages_[l]) + delta);
      if (watching_[l] == 0) {
        watching_[l] = 1;
        watched_.push_back(l);
      }
    }
  }

  // Runs SimGrid through every event due by `t` (one run per event: SimGrid's run_until stops
  // early when it gets within 10 µs of its target), then brings its clock to t.
  void run_to(Time t) {
    while (in_flight_ > 0) {
      const double delay = sg::Platform::next_event_delay();
      if (delay < 0.0) break;
      const double date = sg::Platform::clock() + delay;
      if (ceil_ps(date) > t) break;
      const double before = sg::Platform::clock();
      const std::size_t arrivals = arrived_.size();
      sg::Platform::run_until(date);
      if (sg::Platform::clock() == before && arrived_.size() == arrivals) break;  // no progress
    }
    sg::Platform::run_until(t.seconds());
  }

  void arrived(const s4u::Activity& a) {
    const auto it = by_activity_.find(&a);
    if (it == by_activity_.end()) return;
    arrived_.push_back(it->second);
    by_activity_.erase(it);
    --in_flight_;
  }

  std::uint32_t local(const TransferState& tr, EndpointId e) const {
    return static_cast<std::uint32_t>(
        std::lower_bound(tr.endpoints.begin(), tr.endpoints.end(), e) - tr.endpoints.begin());
  }

  // Lays out the phase's flows, picks its pattern and message count, and sends its first
  // messages after the part of its latency SimGrid does not charge.
  void begin_phase(std::uint32_t slot, Time now) {
    TransferState& tr = transfers_[slot];
    if (tr.plan->phases.empty()) {
      finish_transfer(slot);
      return;
    }
    const Phase& phase = tr.plan->phases[tr.phase];
    tr.endpoints.clear();
    tr.flows.clear();
    double alpha = 0.0, largest = 0.0;
    for (const FlowSpec& f : phase.flows) {
      const double bytes = f.bytes_per_payload_byte * tr.payload;
      if (bytes <= 0.0 || f.src == f.dst) continue;
      tr.endpoints.push_back(f.src);
      tr.endpoints.push_back(f.dst);
      alpha = std::max(alpha, platform_.message_latency(f.src, f.dst));
      largest = std::max(largest, bytes);
    }
    std::sort(tr.endpoints.begin(), tr.endpoints.end());
    tr.endpoints.erase(std::unique(tr.endpoints.begin(), tr.endpoints.end()), tr.endpoints.end());
    tr.in.assign(tr.endpoints.size(), {});
    tr.out.assign(tr.endpoints.size(), {});
    for (const FlowSpec& f : phase.flows) {
      const double bytes = f.bytes_per_payload_byte * tr.payload;
      if (bytes <= 0.0 || f.src == f.dst) continue;
      FlowRun run;
      run.src = local(tr, f.src);
      run.dst = local(tr, f.dst);
      run.bytes = bytes;
      run.rate_cap = f.bytes_per_payload_byte * phase.rate_cap_for(tr.payload);
      run.route = topology_.route(f.src, f.dst);
      tr.out[run.src].push_back(static_cast<std::uint32_t>(tr.flows.size()));
      tr.in[run.dst].push_back(static_cast<std::uint32_t>(tr.flows.size()));
      tr.flows.push_back(run);
    }
    tr.flows_left = static_cast<std::uint32_t>(tr.flows.size());
    const std::uint32_t depth = pick_pattern(tr, phase, largest);
    // SimGrid charges α per message along the critical path; the plan's latency covers the rest.
    const double charged = alpha * static_cast<double>(depth);
    const double extra = std::max(0.0, phase.latency_for(tr.payload).seconds() - charged);
    if (tr.flows.empty() || extra > 0.0)
      timers_.push(now + Time::from_seconds(extra), slot);
    else
      send_phase(slot);
  }

  // Sets the pattern and the messages per flow; returns the critical path's length in
  // messages (for the latency SimGrid charges).
  std::uint32_t pick_pattern(TransferState& tr, const Phase& phase, double largest) {
    const TransferPlan& plan = *tr.plan;
    const bool ring_algorithm =
        plan.algorithm == Algorithm::ring || plan.algorithm == Algorithm::hierarchical;
    const bool ring_collective = plan.collective == CollectiveType::all_reduce ||
                                 plan.collective == CollectiveType::all_gather ||
                                 plan.collective == CollectiveType::reduce_scatter ||
                                 plan.collective == CollectiveType::all_to_all;
    if (ring_algorithm && ring_collective) {
      tr.pattern = Pattern::ring;
      tr.messages = std::max<std::uint32_t>(phase.steps, 1);
      return tr.messages;
    }
    const double chunk =
        phase.pipeline.chunk_bytes > 0.0 ? phase.pipeline.chunk(tr.payload) : kChunkBytes;
    const double chunks = std::ceil(largest / std::max(chunk, 1.0));
    tr.messages = static_cast<std::uint32_t>(std::clamp(chunks, 1.0, double{kMaxChunks}));
    const std::uint32_t depth = longest_path(tr);
    tr.pattern = depth > 0 ? Pattern::forward : Pattern::stream;
    return std::max<std::uint32_t>(depth, 1);
  }

  // The longest chain of flows (Kahn's algorithm), or 0 when the flows form a cycle.
  static std::uint32_t longest_path(const TransferState& tr) {
    const std::size_t n = tr.endpoints.size();
    std::vector<std::uint32_t> indegree(n), level(n, 0), queue;
    for (std::size_t v = 0; v < n; ++v) {
      indegree[v] = static_cast<std::uint32_t>(tr.in[v].size());
      if (indegree[v] == 0) queue.push_back(static_cast<std::uint32_t>(v));
    }
    std::uint32_t longest = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const std::uint32_t v = queue[q];
      for (std::uint32_t f : tr.out[v]) {
        const std::uint32_t w = tr.flows[f].dst;
        level[w] = std::max(level[w], level[v] + 1);
        longest = std::max(longest, level[w]);
        if (--indegree[w] == 0) queue.push_back(w);
      }
    }
    return queue.size() == n ? longest : 0;
  }

  void send_phase(std::uint32_t slot) {
    TransferState& tr = transfers_[slot];
    if (tr.flows.empty()) {
      next_phase(slot);
      return;
    }
    for (std::uint32_t f = 0; f < tr.flows.size(); ++f)
      try_send(slot, f);
  }

  // The fewest messages `v` has received over every flow into it (all sent when none flows in).
  static std::uint32_t received(const TransferState& tr, std::uint32_t v) {
    std::uint32_t least = tr.messages;
    for (std::uint32_t f : tr.in[v])
      least = std::min(least, tr.flows[f].done);
    return least;
  }

  void try_send(std::uint32_t slot, std::uint32_t f) {
    TransferState& tr = transfers_[slot];
    while (true) {
      FlowRun& run = tr.flows[f];
      const std::uint32_t k = run.sent;
      if (k == tr.messages || k > run.done) return;
      if (run.rate_cap > 0.0 && !run.solver_bound && now_ < run.next_send) {
        if (!run.paced) {
          run.paced = true;
          paced_.push(run.next_send, (std::uint64_t{slot} << 32) | f);
        }
        return;
      }
      switch (tr.pattern) {
        case Pattern::ring:
          if (k > 0 && received(tr, run.src) < k) return;
          break;
        case Pattern::forward:
          if (!tr.in[run.src].empty() && received(tr, run.src) < k + 1) return;
          break;
        case Pattern::stream:
          break;
      }
      send(slot, f);
    }
  }

  void send(std::uint32_t slot, std::uint32_t f) {
    TransferState& tr = transfers_[slot];
    FlowRun& run = tr.flows[f];
    ++run.sent;
    const double bytes = std::max(1.0, std::round(run.bytes / tr.messages));
    const std::uint32_t m = pool_alloc(messages_, free_messages_);
    Message& msg = messages_[m];
    msg.sequence = next_sequence_++;
    msg.transfer = slot;
    msg.flow = f;
    msg.comm = s4u::Comm::sendto_init(platform_.host(tr.endpoints[run.src]),
                                      platform_.host(tr.endpoints[run.dst]));
    msg.comm->set_payload_size(static_cast<std::uint64_t>(bytes));
    by_activity_[msg.comm.get()] = m;
    ++in_flight_;
    count_on_links(run.route, +1);
    // A ring step waits for its whole round trip; a chunk behind another overlaps its latency.
    const bool round_trip = tr.pattern == Pattern::ring || run.sent == 1;
    const EndpointId from = tr.endpoints[run.src], to = tr.endpoints[run.dst];
    sg::Platform::set_message_factors(round_trip ? latency_factor_ : 0.0,
                                      bandwidth_factor_ * profile_factor(from, to, bytes));
    // A capped flow: bounded inside SimGrid's max-min (Comm::set_rate does not reach host-to-host
    // messages in SimGrid 3.32, and the bandwidth factor scales a message's progress, not its
    // share); else, a token bucket at the cap spaces its messages.
    run.solver_bound = platform_.bound_next_message(run.route, run.rate_cap);
    if (run.rate_cap > 0.0 && !run.solver_bound)
      run.next_send = std::max(now_, run.next_send) + Time::from_seconds(bytes / run.rate_cap);
    msg.comm->start();
  }

  // A calibration profile's point-to-point bandwidth at this message size over the route's
  // (docs/simgrid.md), at most 1; 1 without a send_recv measurement.
  double profile_factor(EndpointId src, EndpointId dst, double bytes) const {
    const CollectiveFit* fit =
        topology_.node_of(src) == topology_.node_of(dst) ? intra_fit_ : inter_fit_;
    if (fit == nullptr) return 1.0;
    const double route = topology_.route_bandwidth(src, dst).bytes_per_second();
    return std::min(1.0, fit->range_for(bytes).busbw / route);
  }

  void delivered(std::uint32_t m, Time t) {
    Message& msg = messages_[m];
    msg.comm = nullptr;
    const std::uint32_t slot = msg.transfer;
    const std::uint32_t f = msg.flow;
    free_messages_.push_back(m);
    TransferState& tr = transfers_[slot];
    FlowRun& run = tr.flows[f];
    ++run.done;
    count_on_links(run.route, -1);
    if (run.done == tr.messages) {
      for (LinkId l : run.route)
        link_bytes_[l] += run.bytes;
      if (--tr.flows_left == 0) {
        next_phase(slot, t);
        return;
      }
    }
    try_send(slot, f);
    const std::uint32_t dst = run.dst;
    for (std::uint32_t g : tr.out[dst])
      try_send(slot, g);
  }

  void next_phase(std::uint32_t slot, Time t = Time::zero()) {
    TransferState& tr = transfers_[slot];
    if (++tr.phase >= tr.plan->phases.size()) {
      finish_transfer(slot);
      return;
    }
    begin_phase(slot, std::max(t, now_));
  }

  void finish_transfer(std::uint32_t slot) {
    finished_.push_back(transfers_[slot].id);
    free_transfers_.push_back(slot);
  }

  const Topology& topology_;
  sg::Platform platform_;
  double latency_factor_;
  double bandwidth_factor_;
  const CollectiveFit* intra_fit_ = nullptr;  // the profile's send_recv inside a node
  const CollectiveFit* inter_fit_ = nullptr;  // and across nodes
  std::vector<double> link_bytes_;
  std::vector<TransferState> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> free_messages_;
  std::unordered_map<const s4u::Activity*, std::uint32_t> by_activity_;
  std::vector<std::uint32_t> arrived_;  // messages SimGrid completed, not yet processed
  std::vector<TransferId> finished_;    // transfers complete, not yet reported
  EventQueue<std::uint32_t> timers_;    // transfer slots whose phase latency ends
  EventQueue<std::uint64_t> paced_;     // (slot << 32 | flow) whose next message may now start
  std::uint64_t next_sequence_ = 0;
  std::size_t in_flight_ = 0;  // messages SimGrid is carrying
  Time now_;
  int stalls_ = 0;  // advance() calls in a row at one time with nothing to do
  // Link counters for traces, only while a sink is set (set_link_rate_sink).
  LinkRateSink sink_;
  std::vector<std::uint32_t> link_messages_;    // per link: messages in flight on it
  mutable std::vector<double> reported_rate_;   // per link: the rate last reported
  mutable std::vector<std::uint8_t> watching_;  // per link: in watched_
  mutable std::vector<LinkId> watched_;         // links that carry messages or were last busy
};

}  // namespace

}  // namespace clustersim::engine::detail

// The plugin's one exported symbol (engine/network/simgrid/loader.cpp opens it); the caller owns
// the model. Throws as the model's constructor does.
extern "C" __attribute__((visibility("default"))) clustersim::engine::NetworkModel*
clustersim_make_simgrid_model(const clustersim::engine::Topology& topology,
                              const clustersim::engine::CollectiveProfile* profile,
                              const clustersim::engine::NetworkOptions& options) {
  return new clustersim::engine::detail::SimgridModel(topology, profile, options.simgrid);
}
