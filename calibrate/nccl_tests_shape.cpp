#include "calibrate/nccl_tests_shape.hpp"

#include <cmath>
#include <stdexcept>

namespace clustersim::calibrate {

namespace {

std::string count_of(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

std::optional<std::uint32_t> ranks_from_bus_factor(const std::string& collective,
                                                   const std::vector<CollectiveMeasurement>& rows) {
  const bool all_reduce = collective == "all_reduce";
  if (!all_reduce && collective != "all_gather" && collective != "reduce_scatter" &&
      collective != "all_to_all")
    return std::nullopt;
  // Summed over rows, the large ones dominate: their two printed decimals are the most precise.
  double algbw = 0.0, busbw = 0.0;
  for (const auto& r : rows) {
    algbw += r.algbw;
    busbw += r.busbw;
  }
  if (!(algbw > 0.0)) return std::nullopt;
  const double ratio = busbw / algbw;
  const double ceiling = all_reduce ? 2.0 : 1.0;  // the factor's limit as n grows
  if (ratio < 0.0 || ratio >= ceiling) return std::nullopt;
  const double n = ceiling / (ceiling - ratio);
  const double nearest = std::round(n);
  // Between two counts: the printing is too coarse to tell (or busbw follows another formula).
  if (std::abs(n - nearest) > 0.25) return std::nullopt;
  return static_cast<std::uint32_t>(nearest);
}

ResolvedShape resolve_shape(const ShapeEvidence& evidence,
                            const std::vector<CollectiveMeasurement>& rows,
                            const StatedShape& stated) {
  ResolvedShape s;
  const auto from_factor = ranks_from_bus_factor(evidence.collective, rows);
  const std::size_t listed = evidence.listed_ranks.size();
  const std::size_t highest = listed == 0 ? 0 : *evidence.listed_ranks.rbegin() + 1;
  const std::string factor_text =
      from_factor ? "busbw/algbw implies " + count_of(*from_factor, "rank") : "";
  const std::string lines_text = "the '# Rank' lines list " + count_of(listed, "rank");

  if (stated.ranks != 0) {
    if (from_factor && *from_factor != stated.ranks)
      throw std::invalid_argument("--ranks " + std::to_string(stated.ranks) + " conflicts with " +
                                  evidence.collective + "'s table: " + factor_text);
    if (highest > stated.ranks)
      throw std::invalid_argument("--ranks " + std::to_string(stated.ranks) + " conflicts with " +
                                  lines_text + " (the highest is rank " +
                                  std::to_string(highest - 1) + ")");
    s.ranks = stated.ranks;
    s.ranks_from = "--ranks";
  } else if (listed != 0) {
    if (from_factor && *from_factor == listed) {
      s.ranks = *from_factor;
      s.ranks_from = "rank lines, agreeing with busbw/algbw";
    } else if (from_factor && *from_factor > listed && *from_factor >= highest) {
      // Logs of -g 1 runs may list only some ranks; the table counts them all.
      s.ranks = *from_factor;
      s.ranks_from = "busbw/algbw (" + lines_text + ", a subset)";
    } else if (from_factor) {
      throw std::invalid_argument("conflicting rank counts: " + lines_text + " but " + factor_text +
                                  "; allowed: --ranks N to say which is right");
    } else if (highest != listed) {
      throw std::invalid_argument(lines_text + ", up to rank " + std::to_string(highest - 1) +
                                  ", and " + evidence.collective +
                                  "'s table does not carry the rank count; allowed: --ranks N");
    } else {
      s.ranks = static_cast<std::uint32_t>(listed);
      s.ranks_from = "rank lines";
    }
  } else if (from_factor) {
    s.ranks = *from_factor;
    s.ranks_from = "busbw/algbw (no rank lines)";
  } else {
    throw std::invalid_argument(
        "cannot tell how many GPUs took part: no '#  Rank  N ... on HOST device D' lines, and " +
        evidence.collective + "'s busbw/algbw does not carry the rank count; allowed: --ranks N");
  }

  const std::size_t hosts = evidence.hosts.size();
  if (stated.nodes != 0) {
    if (hosts > stated.nodes)
      throw std::invalid_argument("--nodes " + std::to_string(stated.nodes) +
                                  " conflicts with the '# Rank' lines, which name " +
                                  count_of(hosts, "host"));
    if (stated.nodes > s.ranks)
      throw std::invalid_argument("--nodes " + std::to_string(stated.nodes) + " exceeds the " +
                                  count_of(s.ranks, "rank"));
    s.nodes = stated.nodes;
    s.nodes_from = "--nodes";
  } else if (hosts != 0 && listed == s.ranks) {
    s.nodes = static_cast<std::uint32_t>(hosts);
    s.nodes_from = "host names in the rank lines";
  } else if (hosts != 0) {
    throw std::invalid_argument("cannot tell how many nodes took part: " + lines_text + " of " +
                                std::to_string(s.ranks) + ", on " + count_of(hosts, "host") +
                                "; allowed: --nodes N");
  } else {
    throw std::invalid_argument(
        "cannot tell how many nodes took part: no '# Rank' lines name the hosts; allowed: "
        "--nodes N");
  }
  return s;
}

}  // namespace clustersim::calibrate
