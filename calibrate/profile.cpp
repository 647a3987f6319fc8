#include "calibrate/profile.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>

#include "engine/calibration/json_fields.hpp"
#include "engine/io/atomic_file.hpp"

namespace clustersim::calibrate {

using engine::JsonPath;
using nlohmann::json;

namespace {

json measurements_json(const Measurements& m) {
  json copies = json::array(), gemms = json::array(), collectives = json::array();
  for (const auto& c : m.copies) {
    json row = {{"direction", c.direction},
                {"bytes", c.bytes},
                {"seconds", c.seconds},
                {"bandwidth", c.bandwidth()}};
    if (c.src >= 0) row["src"] = c.src;
    if (c.dst >= 0) row["dst"] = c.dst;
    copies.push_back(std::move(row));
  }
  for (const auto& g : m.gemms)
    gemms.push_back({{"m", g.m},
                     {"n", g.n},
                     {"k", g.k},
                     {"batch", g.batch},
                     {"dtype", g.dtype},
                     {"seconds", g.seconds},
                     {"flops_per_s", g.flops_per_s()}});
  for (const auto& c : m.collectives) {
    json row = {{"collective", c.collective}, {"ranks", c.ranks},
                {"nodes", c.nodes},           {"bytes", c.bytes},
                {"count", c.count},           {"dtype", c.dtype},
                {"in_place", c.in_place},     {"seconds", c.seconds},
                {"algbw", c.algbw},           {"busbw", c.busbw}};
    row["wrong"] = c.wrong < 0 ? json(nullptr) : json(c.wrong);
    collectives.push_back(std::move(row));
  }
  return {{"copies", copies}, {"gemms", gemms}, {"collectives", collectives}};
}

Measurements measurements_from(const json& j, const JsonPath& at) {
  Measurements m;
  const auto& copies = engine::require_array(j, "copies", at);
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const JsonPath a = at.key("copies").index(i);
    CopyMeasurement c;
    c.direction = engine::require_string(copies[i], "direction", a);
    c.bytes = engine::require_positive(copies[i], "bytes", a);
    c.seconds = engine::require_positive(copies[i], "seconds", a);
    if (copies[i].contains("src"))
      c.src = static_cast<int>(engine::require_count(copies[i], "src", a));
    if (copies[i].contains("dst"))
      c.dst = static_cast<int>(engine::require_count(copies[i], "dst", a));
    m.copies.push_back(c);
  }
  const auto& gemms = engine::require_array(j, "gemms", at);
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const JsonPath a = at.key("gemms").index(i);
    GemmMeasurement g;
    g.m = engine::require_count(gemms[i], "m", a);
    g.n = engine::require_count(gemms[i], "n", a);
    g.k = engine::require_count(gemms[i], "k", a);
    // Profiles written before batched shapes were measured have no "batch": one product.
    if (gemms[i].contains("batch")) g.batch = engine::require_count(gemms[i], "batch", a);
    g.dtype = engine::require_string(gemms[i], "dtype", a);
    g.seconds = engine::require_positive(gemms[i], "seconds", a);
    m.gemms.push_back(g);
  }
  const auto& colls = engine::require_array(j, "collectives", at);
  for (std::size_t i = 0; i < colls.size(); ++i) {
    const JsonPath a = at.key("collectives").index(i);
    const json& r = colls[i];
    CollectiveMeasurement c;
    c.collective = engine::require_string(r, "collective", a);
    if (!engine::parse_collective_type(c.collective))
      a.key("collective").fail("unknown collective '" + c.collective + "'");
    c.ranks = static_cast<std::uint32_t>(engine::require_count(r, "ranks", a));
    c.nodes = static_cast<std::uint32_t>(engine::require_count(r, "nodes", a));
    c.bytes = engine::require_number(r, "bytes", a);
    c.count = engine::require_count(r, "count", a);
    c.dtype = engine::require_string(r, "dtype", a);
    const json& in_place = engine::require(r, "in_place", a);
    if (!in_place.is_boolean()) a.key("in_place").fail("expected true or false");
    c.in_place = in_place.get<bool>();
    c.seconds = engine::require_positive(r, "seconds", a);
    c.algbw = engine::require_number(r, "algbw", a);
    c.busbw = engine::require_number(r, "busbw", a);
    const json& wrong = engine::require(r, "wrong", a);
    if (!wrong.is_null() && (!wrong.is_number_integer() || wrong.get<std::int64_t>() < 0))
      a.key("wrong").fail("expected a count of wrong elements or null (not checked)");
    c.wrong = wrong.is_null() ? -1 : wrong.get<std::int64_t>();
    m.collectives.push_back(c);
  }
  return m;
}

}  // namespace

json to_json(const Profile& profile) {
  json doc = models::to_json(profile);  // format, version, provenance, fitted
  doc["measurements"] = measurements_json(profile.measurements);
  return doc;
}

Profile profile_from_json(const json& doc, const std::string& file) {
  Profile p{models::calibration_profile_from_json(doc, file), {}};
  const JsonPath top(file, "");
  p.measurements =
      measurements_from(engine::require(doc, "measurements", top), top.key("measurements"));
  return p;
}

Profile read_profile(const std::string& path) {
  return profile_from_json(engine::read_json_file(path), path);
}

void write_profile(const Profile& profile, const std::string& path) {
  const std::string text = to_json(profile).dump(2) + "\n";
  engine::write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace clustersim::calibrate
