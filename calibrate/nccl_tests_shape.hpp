// How many ranks and nodes one nccl-tests test ran on, from the evidence a log carries: its
// "# Rank" lines, the bus factor its table implies (busbw / algbw), and what the user states
// (--ranks, --nodes). docs/calibration.md "Bring your own logs" gives the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"

namespace clustersim::calibrate {

// What the user states on the command line; 0 = not stated.
struct StatedShape {
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
};

// What one test's part of a log says about its shape.
struct ShapeEvidence {
  std::string collective;                // engine name
  std::set<std::uint64_t> listed_ranks;  // indexes named by "# Rank N" lines
  std::vector<std::string> hosts;        // distinct hosts of those lines
};

struct ResolvedShape {
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
  std::string ranks_from;  // how it was decided, for the summary
  std::string nodes_from;
};

// The rank count busbw / algbw implies for collectives whose bus factor depends on it (all_reduce
// 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n); nullopt for the others, for tables
// without bandwidth, or when the ratio falls between two rank counts.
std::optional<std::uint32_t> ranks_from_bus_factor(const std::string& collective,
                                                   const std::vector<CollectiveMeasurement>& rows);

// Throws std::invalid_argument saying what conflicts or what is missing and what to state.
ResolvedShape resolve_shape(const ShapeEvidence& evidence,
                            const std::vector<CollectiveMeasurement>& rows,
                            const StatedShape& stated);

}  // namespace clustersim::calibrate
