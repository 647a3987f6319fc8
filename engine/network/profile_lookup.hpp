// How the network models take a calibration profile's figures (docs/calibration.md "Using a
// profile"): a collective whose (type, group shape) the profile covers, exactly or by the nearest
// shape, costs α + S·factor / busbw of the size range that holds S, instead of what the topology
// and the algorithm alone would predict.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "engine/calibration/collective_profile.hpp"
#include "engine/network/transfer_plan.hpp"

namespace clustersim::engine {

// One (type, group shape) that took its figures from the profile during a run.
struct ProfileUse {
  CollectiveType type = CollectiveType::all_reduce;
  GroupShape requested;
  const CollectiveFit* fit = nullptr;  // the entry used (points into the profile); nullptr: the
                                       // profile has no entry of this type, the topology decided
  bool exact = false;
  double bus_factor = 1.0;          // the factor applied for the requested shape
  std::vector<std::size_t> ranges;  // indices into fit->ranges that some transfer used, ascending
};

// The figures for one transfer.
struct ProfiledCost {
  double alpha_s = 0.0;
  double busbw = 0.0;       // bytes/s
  double bus_factor = 1.0;  // t = alpha_s + payload·bus_factor / busbw
};

class ProfileLookup {
 public:
  explicit ProfileLookup(const CollectiveProfile* profile) : profile_(profile) {}

  // The profile's cost of `plan` at `payload_bytes`; nullopt without a profile, for a plan that
  // moves nothing (a group of one), a hand-built plan, or a type the profile never measured.
  // Exact shape: the entry's own bus_factor; nearest shape: nccl-tests' factor for the requested
  // rank count, because busbw is what carries over between group sizes.
  std::optional<ProfiledCost> find(const TransferPlan& plan, double payload_bytes);

  // Every (type, shape) asked for so far, in (type, nodes, ranks) order.
  std::vector<ProfileUse> uses() const;

 private:
  struct Entry {
    CollectiveMatch match;
    double bus_factor = 1.0;
    std::vector<bool> used;  // per range of match.fit
  };
  const CollectiveProfile* profile_;
  std::map<std::tuple<CollectiveType, std::uint32_t, std::uint32_t>, Entry> entries_;
};

}  // namespace clustersim::engine
