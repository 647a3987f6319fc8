// One interface, several fidelities (DESIGN.md "Network models"): analytical, flow, ideal and,
// where SimGrid was found at build time, simgrid. The simulator hands a model transfers; the model
// tells it when each completes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/calibration/collective_profile.hpp"
#include "engine/network/profile_lookup.hpp"
#include "engine/network/transfer_plan.hpp"
#include "engine/topology.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

using TransferId = std::uint32_t;

// Receives the aggregate rate of a link each time it changes (for utilization counters in traces).
using LinkRateSink = std::function<void(LinkId, Time, double bytes_per_second)>;

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual std::string_view name() const = 0;

  // Starts transfer `id` at `now`: `plan` scaled by `payload_bytes`. `plan` stays valid until the
  // transfer completes.
  virtual void start(TransferId id, const TransferPlan& plan, double payload_bytes, Time now) = 0;
  // Time of the model's next internal event (a phase or flow ending), Time::max() when idle.
  virtual Time next_event_time() const = 0;
  // Processes every internal event at time `t` (== next_event_time()) and appends the transfers
  // that completed at `t` to `completed`, in a deterministic order.
  virtual void advance(Time t, std::vector<TransferId>& completed) = 0;

  // Bytes each link has carried so far, indexed by LinkId.
  virtual const std::vector<double>& link_bytes() const = 0;
  // Optional: report link rate changes. Costs time; only set when a trace asks for counters.
  virtual void set_link_rate_sink(LinkRateSink sink) = 0;

  // The (type, group shape) pairs whose cost came from a calibration profile so far.
  virtual std::vector<ProfileUse> profile_uses() const { return {}; }
};

// simulation.simgrid (docs/simgrid.md): how the simgrid model configures SimGrid.
// The other models ignore it.
inline constexpr std::array<std::string_view, 3> kSimgridModels{"LV08", "CM02", "IB"};
struct SimgridSettings {
  std::string model{"LV08"};      // SimGrid's network/model: one of kSimgridModels
  double bandwidth_factor = 1.0;  // network/bandwidth-factor (links are derated already)
  double latency_factor = 1.0;    // network/latency-factor
  bool crosstraffic = false;      // network/crosstraffic: TCP acknowledgements flow back
};
struct NetworkOptions {
  SimgridSettings simgrid;
};

// The registry of network models (DESIGN.md "Network models"): the scenario key
// simulation.network_model, the CLI's --network, the summary and the JSON all take names from
// it. A new model is its own file plus one line in network_model.cpp's table.
struct NetworkModelEntry {
  std::string_view name;
  std::string_view help;  // one line, for --help and docs
  // With `profile` (it must outlive the model), a model may take each covered collective's cost
  // from it (docs/calibration.md "Using a profile").
  std::unique_ptr<NetworkModel> (*make)(const Topology& topology, const CollectiveProfile* profile,
                                        const NetworkOptions& options);
  // A transfer's time never depends on the others in flight (no shared bandwidth): identical
  // replicas then see identical times, which folding relies on.
  bool contention_free = false;
  // The model keeps process-wide state (SimGrid's engine and clock): one run per process.
  bool once_per_process = false;
};
std::span<const NetworkModelEntry> network_models();
const NetworkModelEntry* find_network_model(std::string_view name);  // nullptr if unknown
std::vector<std::string> network_model_names();
inline constexpr std::string_view kDefaultNetworkModel = "flow";

// Throws std::invalid_argument naming the allowed models for an unknown `name`.
std::unique_ptr<NetworkModel> make_network_model(std::string_view name, const Topology& topology,
                                                 const CollectiveProfile* profile = nullptr,
                                                 const NetworkOptions& options = {});

}  // namespace clustersim::engine
