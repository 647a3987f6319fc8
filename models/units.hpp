// Strict parsers for the quantities written in scenario files and on the command line
// (docs/scenario.md "Units"): a number immediately followed by a unit, e.g. "25MB", "200Gb/s",
// "1.5ms". Results are SI (bytes, bytes per second, picoseconds). No space between number and
// unit, no sign, no "nan"/"inf": a typo should fail loudly instead of becoming a silent default.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/units.hpp"

namespace clustersim::models {

// A malformed quantity. what() says what was wrong and which forms are allowed; it does not name
// a file or key (the caller adds those).
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Byte multiples: decimal as vendors quote bandwidth and capacity, binary as memory is reported.
inline constexpr double kGB = 1e9;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

// The unit lists, for messages and documentation.
inline constexpr std::string_view kSizeUnits = "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
inline constexpr std::string_view kBandwidthUnits =
    "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s (bytes) or b/s, Kb/s, Mb/s, Gb/s, "
    "Tb/s (bits)";
inline constexpr std::string_view kTimeUnits = "ps, ns, us, ms, s";

// "25MB" -> 25e6, "1GiB" -> 1073741824. Decimal prefixes are powers of 1000, binary of 1024.
double parse_size(std::string_view text);
// "900GB/s" -> 900e9 B/s, "200Gb/s" -> 25e9 B/s (bits / 8), "25GiB/s" -> 25·2^30 B/s.
engine::Bandwidth parse_bandwidth(std::string_view text);
// "2us" -> 2e6 ps, "1.5ms" -> 1.5e9 ps; rounded to the nearest picosecond.
engine::Time parse_time(std::string_view text);
// A plain non-negative number without unit: "1e11", "312", "0.5".
double parse_number(std::string_view text);

}  // namespace clustersim::models
