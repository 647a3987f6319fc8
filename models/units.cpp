#include "models/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace clustersim::models {
namespace {

struct Unit {
  std::string_view suffix;
  double scale;  // to SI
};

constexpr double kKi = 1024.0;
constexpr std::array<Unit, 11> kSizes = {{{"B", 1.0},
                                          {"KB", 1e3},
                                          {"MB", 1e6},
                                          {"GB", 1e9},
                                          {"TB", 1e12},
                                          {"PB", 1e15},
                                          {"KiB", kKi},
                                          {"MiB", kKi* kKi},
                                          {"GiB", kKi* kKi* kKi},
                                          {"TiB", kKi* kKi* kKi* kKi},
                                          {"PiB", kKi* kKi* kKi* kKi* kKi}}};
// Link speeds are quoted in bits (200Gb/s InfiniBand HDR): divide by 8 for bytes.
constexpr std::array<Unit, 5> kBits = {
    {{"b", 1.0 / 8}, {"Kb", 1e3 / 8}, {"Mb", 1e6 / 8}, {"Gb", 1e9 / 8}, {"Tb", 1e12 / 8}}};
constexpr std::array<Unit, 5> kTimes = {
    {{"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}};  // in picoseconds

// Splits "25MB" into 25 and "MB". The number is what std::from_chars accepts in general format
// (digits, optional fraction and exponent); no sign, no leading or trailing space.
std::pair<double, std::string_view> split(std::string_view text, std::string_view kind) {
  auto bad = [&](const std::string& why) -> UnitError {
    return UnitError("'" + std::string(text) + "' is not a valid " + std::string(kind) + ": " +
                     why);
  };
  if (text.empty()) throw bad("empty");
  if (text.front() == '-') throw bad("negative values are not allowed");
  if (text.front() == '+' || text.front() == ' ' || text.back() == ' ')
    throw bad("write the number without sign or surrounding spaces");
  double value = 0.0;
  const auto* begin = text.data();
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) throw bad("out of range");
  if (ec != std::errc() || ptr == begin) throw bad("it must start with a number");
  if (!std::isfinite(value)) throw bad("the number must be finite");
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  if (!unit.empty() && unit.front() == ' ')
    throw bad("write the unit right after the number, without a space (e.g. 25MB)");
  return {value, unit};
}

template <std::size_t N>
const Unit* find(const std::array<Unit, N>& units, std::string_view suffix) {
  for (const Unit& u : units)
    if (u.suffix == suffix) return &u;
  return nullptr;
}

[[noreturn]] void unknown_unit(std::string_view text, std::string_view kind, std::string_view unit,
                               std::string_view allowed) {
  const std::string why =
      unit.empty() ? "a unit is required" : "unknown unit '" + std::string(unit) + "'";
  throw UnitError("'" + std::string(text) + "' is not a valid " + std::string(kind) + ": " + why +
                  "; allowed units: " + std::string(allowed));
}

}  // namespace

double parse_size(std::string_view text) {
  const auto [value, unit] = split(text, "size");
  const Unit* u = find(kSizes, unit);
  if (u == nullptr) unknown_unit(text, "size", unit, kSizeUnits);
  return value * u->scale;
}

engine::Bandwidth parse_bandwidth(std::string_view text) {
  const auto [value, unit] = split(text, "bandwidth");
  constexpr std::string_view per_second = "/s";
  if (unit.size() > per_second.size() && unit.ends_with(per_second)) {
    const std::string_view prefix = unit.substr(0, unit.size() - per_second.size());
    const Unit* u = find(kSizes, prefix);
    if (u == nullptr) u = find(kBits, prefix);
    if (u != nullptr) return engine::Bandwidth::bytes_per_second(value * u->scale);
  }
  unknown_unit(text, "bandwidth", unit, kBandwidthUnits);
}

engine::Time parse_time(std::string_view text) {
  const auto [value, unit] = split(text, "time");
  const Unit* u = find(kTimes, unit);
  if (u == nullptr) unknown_unit(text, "time", unit, kTimeUnits);
  const double ps = value * u->scale;
  if (ps > 9.2e18)
    throw UnitError("'" + std::string(text) + "' is too long a time (max ~106 days)");
  return engine::Time::from_ps(static_cast<std::int64_t>(std::llround(ps)));
}

double parse_number(std::string_view text) {
  const auto [value, unit] = split(text, "number");
  if (!unit.empty())
    throw UnitError("'" + std::string(text) + "' is not a valid number: unexpected '" +
                    std::string(unit) + "'; write a plain number such as 8, 0.5 or 1e11");
  return value;
}

}  // namespace clustersim::models
