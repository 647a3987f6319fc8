// The model factory and the ideal model (communication is free).
#include "engine/network/network_model.hpp"

#include <stdexcept>

#include "engine/network/model_parts.hpp"

namespace clustersim::engine {

namespace detail {

void add_plan_link_bytes(const Topology& topology, const TransferPlan& plan, double payload_bytes,
                         std::vector<double>& link_bytes) {
  for (const Phase& phase : plan.phases) {
    for (const FlowSpec& f : phase.flows) {
      const double bytes = f.bytes_per_payload_byte * payload_bytes;
      for (LinkId l : topology.route(f.src, f.dst))
        link_bytes[l] += bytes;
    }
  }
}

namespace {

// Every transfer completes at its start time; links still count the bytes they would carry.
class IdealModel final : public NetworkModel {
 public:
  explicit IdealModel(const Topology& topology)
      : topology_(topology), link_bytes_(topology.num_links(), 0.0) {}

  std::string_view name() const override { return "ideal"; }
  void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) override {
    add_plan_link_bytes(topology_, plan, payload_bytes, link_bytes_);
    queue_.push(now, id);
  }
  Time next_event_time() const override { return queue_.empty() ? Time::max() : queue_.top_time(); }
  void advance(Time t, std::vector<TransferId>& completed) override {
    const auto begin = static_cast<std::ptrdiff_t>(completed.size());
    while (!queue_.empty() && queue_.top_time() <= t)
      completed.push_back(queue_.pop());
    std::sort(completed.begin() + begin, completed.end());
  }
  const std::vector<double>& link_bytes() const override { return link_bytes_; }
  // No link ever carries a rate: the bytes move in zero time.
  void set_link_rate_sink(LinkRateSink) override {}

 private:
  const Topology& topology_;
  std::vector<double> link_bytes_;
  EventQueue<TransferId> queue_;
};

}  // namespace

std::unique_ptr<NetworkModel> make_ideal_model(const Topology& topology) {
  return std::make_unique<IdealModel>(topology);
}

}  // namespace detail

std::unique_ptr<NetworkModel> make_network_model(NetworkModelKind kind, const Topology& topology,
                                                 const CollectiveProfile* profile) {
  switch (kind) {
    case NetworkModelKind::analytical:
      return detail::make_analytical_model(topology, profile);
    case NetworkModelKind::flow:
      return detail::make_flow_model(topology, profile);
    case NetworkModelKind::ideal:
      return detail::make_ideal_model(topology);
  }
  throw std::invalid_argument("unknown network model kind; allowed: analytical, flow, ideal");
}

}  // namespace clustersim::engine
