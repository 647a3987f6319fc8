#include "engine/calibration/collective_profile.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "engine/calibration/json_fields.hpp"

namespace clustersim::engine {

std::string GroupShape::str() const {
  return std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " on " +
         std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
}

const ProtocolRange& CollectiveFit::range_for(double bytes) const {
  if (ranges.empty()) throw std::logic_error("CollectiveFit without ranges");
  const ProtocolRange* chosen = &ranges.front();
  for (const auto& r : ranges) {
    if (bytes >= r.min_bytes) chosen = &r;
  }
  return *chosen;
}

double CollectiveFit::time_seconds(double bytes) const {
  const ProtocolRange& r = range_for(bytes);
  return r.alpha_s + bytes * bus_factor / r.busbw;
}

namespace {

void validate(const CollectiveFit& f) {
  const std::string what = std::string(to_string(f.type)) + " over " + f.shape.str();
  if (f.shape.ranks == 0 || f.shape.nodes == 0 || f.shape.nodes > f.shape.ranks)
    throw ProfileError(what + ": a group needs at least one rank per node");
  if (!(f.bus_factor > 0.0)) throw ProfileError(what + ": bus_factor must be positive");
  if (f.ranges.empty()) throw ProfileError(what + ": needs at least one size range");
  double previous_max = -1.0;
  for (const auto& r : f.ranges) {
    if (!(r.busbw > 0.0)) throw ProfileError(what + ": busbw must be positive");
    if (!(r.alpha_s >= 0.0)) throw ProfileError(what + ": alpha_s must be >= 0");
    if (r.max_bytes < r.min_bytes || r.min_bytes <= previous_max)
      throw ProfileError(what + ": size ranges must be ascending and must not overlap");
    previous_max = r.max_bytes;
  }
}

double shape_distance(GroupShape a, GroupShape b) {
  const double locality = a.intra_node() == b.intra_node() ? 0.0 : 1000.0;
  const auto log_ratio = [](double x, double y) { return std::abs(std::log2(x / y)); };
  return locality + log_ratio(a.ranks, b.ranks) + log_ratio(a.nodes, b.nodes);
}

}  // namespace

CollectiveProfile::CollectiveProfile(std::vector<CollectiveFit> fits) : fits_(std::move(fits)) {
  for (const auto& f : fits_)
    validate(f);
  const auto key = [](const CollectiveFit& f) {
    return std::tuple(f.type, f.shape.nodes, f.shape.ranks);
  };
  std::stable_sort(fits_.begin(), fits_.end(),
                   [&](const auto& a, const auto& b) { return key(a) < key(b); });
  for (std::size_t i = 1; i < fits_.size(); ++i) {
    if (key(fits_[i]) == key(fits_[i - 1]))
      throw ProfileError(std::string(to_string(fits_[i].type)) + " over " + fits_[i].shape.str() +
                         " appears twice");
  }
}

CollectiveMatch CollectiveProfile::lookup(CollectiveType type, GroupShape shape) const {
  CollectiveMatch best;
  double best_distance = 0.0;
  for (const auto& f : fits_) {
    if (f.type != type) continue;
    const double d = shape_distance(f.shape, shape);
    if (best.fit == nullptr || d < best_distance) {  // strict: ties keep the earlier (smaller)
      best.fit = &f;
      best_distance = d;
    }
  }
  if (best.fit == nullptr) {
    best.note = "no " + std::string(to_string(type)) + " in the profile";
  } else {
    best.exact = best.fit->shape == shape;
    best.note = best.exact ? "exact: " + shape.str()
                           : "nearest: " + best.fit->shape.str() + " for requested " + shape.str();
  }
  return best;
}

std::optional<CollectiveType> parse_collective_type(std::string_view name) {
  for (int i = 0; i < kNumCollectiveTypes; ++i) {
    const auto t = static_cast<CollectiveType>(i);
    if (to_string(t) == name) return t;
  }
  return std::nullopt;
}

nlohmann::json to_json(const CollectiveProfile& profile) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : profile.fits()) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : f.ranges) {
      ranges.push_back({{"min_bytes", r.min_bytes},
                        {"max_bytes", r.max_bytes},
                        {"alpha_s", r.alpha_s},
                        {"busbw", r.busbw},
                        {"rms_relative_error", r.rms_relative_error}});
    }
    out.push_back({{"collective", to_string(f.type)},
                   {"ranks", f.shape.ranks},
                   {"nodes", f.shape.nodes},
                   {"bus_factor", f.bus_factor},
                   {"ranges", ranges}});
  }
  return out;
}

CollectiveProfile collective_profile_from_json(const nlohmann::json& collectives,
                                               const std::string& file) {
  const JsonPath root(file, "fitted.collectives");
  if (!collectives.is_array()) root.fail("expected an array");
  std::vector<CollectiveFit> fits;
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const auto& j = collectives[i];
    const JsonPath at = root.index(i);
    CollectiveFit f;
    const std::string name = require_string(j, "collective", at);
    const auto type = parse_collective_type(name);
    if (!type)
      at.key("collective")
          .fail("unknown collective '" + name +
                "' (allowed: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, "
                "reduce, scatter, gather, send_recv)");
    f.type = *type;
    f.shape.ranks = static_cast<std::uint32_t>(require_count(j, "ranks", at));
    f.shape.nodes = static_cast<std::uint32_t>(require_count(j, "nodes", at));
    f.bus_factor = require_positive(j, "bus_factor", at);
    const auto& ranges = require_array(j, "ranges", at);
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      const JsonPath rat = at.key("ranges").index(k);
      ProtocolRange r;
      r.min_bytes = require_number(ranges[k], "min_bytes", rat);
      r.max_bytes = require_number(ranges[k], "max_bytes", rat);
      r.alpha_s = require_number(ranges[k], "alpha_s", rat);
      r.busbw = require_positive(ranges[k], "busbw", rat);
      r.rms_relative_error = require_number(ranges[k], "rms_relative_error", rat);
      f.ranges.push_back(r);
    }
    try {
      validate(f);
    } catch (const ProfileError& e) {
      at.fail(e.what());
    }
    fits.push_back(std::move(f));
  }
  try {
    return CollectiveProfile(std::move(fits));
  } catch (const ProfileError& e) {
    root.fail(e.what());
  }
}

}  // namespace clustersim::engine
