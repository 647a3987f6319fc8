// The network half of the calibration profile (DESIGN.md "Calibration profile"): per collective
// type and group shape, the fitted model t(S) = α + S·factor / busbw in each size range where one
// NCCL protocol dominates. The analytical model uses it directly; calibrate/ produces it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::engine {

// Who takes part in a collective: how many ranks on how many nodes (nodes == 1: intra-node).
struct GroupShape {
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 1;
  bool intra_node() const { return nodes <= 1; }
  std::string str() const;  // "8 ranks on 1 node"
  auto operator<=>(const GroupShape&) const = default;
};

// One size range [min_bytes, max_bytes] of measured sizes and its fitted line.
// The busbw of a range whose time does not grow with size (latency only, e.g. a noisy sweep over
// small sizes whose fitted slope is not positive): 1 PB/s makes its size term negligible at every
// size the range holds. A fit writes it; plausibility checks accept it as "no bandwidth term".
inline constexpr double kLatencyOnlyBusbw = 1e15;

struct ProtocolRange {
  double min_bytes = 0.0;
  double max_bytes = 0.0;
  double alpha_s = 0.0;             // latency term, seconds
  double busbw = 0.0;               // bus bandwidth, bytes/s (nccl-tests definition)
  double rms_relative_error = 0.0;  // of the fit over the points of this range
};

struct CollectiveFit {
  CollectiveType type = CollectiveType::all_reduce;
  GroupShape shape;
  double bus_factor = 1.0;            // busbw = algbw × bus_factor (nccl-tests), for this shape
  std::vector<ProtocolRange> ranges;  // ascending, non-overlapping, at least one

  // The range whose [min, max] holds `bytes`; below the first or above the last the nearest one
  // (a line extrapolates better than nothing); between two ranges the lower one.
  const ProtocolRange& range_for(double bytes) const;
  double time_seconds(double bytes) const;  // α + bytes·bus_factor / busbw of range_for(bytes)
};

// The entry a lookup found and whether it matches the requested shape exactly.
struct CollectiveMatch {
  const CollectiveFit* fit = nullptr;  // nullptr: the profile has no entry of that type
  bool exact = false;
  std::string note;  // "exact: 8 ranks on 1 node" / "nearest: ... for requested ..."
};

class CollectiveProfile {
 public:
  CollectiveProfile() = default;
  // Validates (positive α ≥ 0, busbw > 0, ranges ascending) and sorts by (type, nodes, ranks).
  explicit CollectiveProfile(std::vector<CollectiveFit> fits);

  const std::vector<CollectiveFit>& fits() const { return fits_; }
  bool empty() const { return fits_.empty(); }

  // Exact shape when measured; otherwise the nearest of the same type, preferring the same
  // locality (intra/inter node), then the closest rank and node counts on a log scale.
  CollectiveMatch lookup(CollectiveType type, GroupShape shape) const;

 private:
  std::vector<CollectiveFit> fits_;
};

std::optional<CollectiveType> parse_collective_type(std::string_view name);

// JSON of the profile's "fitted"."collectives" array (docs/calibration.md).
nlohmann::json to_json(const CollectiveProfile& profile);
// `file` only labels errors: "<file>: fitted.collectives[2].ranges[0].busbw: ...".
CollectiveProfile collective_profile_from_json(const nlohmann::json& collectives,
                                               const std::string& file);
// (A whole profile file is read by models::read_calibration_profile,
// models/calibration_profile.hpp: engine only parses the part it consumes.)

}  // namespace clustersim::engine
