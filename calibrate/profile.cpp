#include "calibrate/profile.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/calibration/json_fields.hpp"

namespace clustersim::calibrate {

using engine::JsonPath;
using nlohmann::json;

namespace {

json devices_json(const Provenance& p) {
  json devices = json::array();
  for (const auto& d : p.devices)
    devices.push_back(
        {{"index", d.index},
         {"name", d.name},
         {"pci_bus_id", d.pci_bus_id},
         {"memory_total", d.memory_total},
         {"memory_free", d.memory_free},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"sm_count", d.sm_count}});
  return devices;
}

json topology_json(const Provenance& p) {
  json pairs = json::array();
  for (const auto& l : p.gpu_links)
    pairs.push_back({{"a", l.a}, {"b", l.b}, {"link", l.link}});
  return {{"fabric", p.fabric}, {"gpu_pairs", pairs}};
}

// The optional inventory parts (CUDA backend) of a provenance object.
void inventory_from(const json& j, const JsonPath& at, Provenance& p) {
  if (const auto it = j.find("devices"); it != j.end()) {
    if (!it->is_array()) at.key("devices").fail("expected an array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& d = (*it)[i];
      const JsonPath a = at.key("devices").index(i);
      DeviceInfo info;
      info.index = static_cast<int>(engine::require_count(d, "index", a));
      info.name = engine::require_string(d, "name", a);
      info.pci_bus_id = engine::optional_string(d, "pci_bus_id", a);
      info.memory_total = engine::require_number(d, "memory_total", a);
      info.memory_free = engine::require_number(d, "memory_free", a);
      const std::string cc = engine::require_string(d, "compute_capability", a);
      if (std::sscanf(cc.c_str(), "%d.%d", &info.cc_major, &info.cc_minor) != 2)
        a.key("compute_capability").fail("expected MAJOR.MINOR, e.g. \"9.0\"");
      info.sm_count = static_cast<int>(engine::require_count(d, "sm_count", a));
      p.devices.push_back(info);
    }
  }
  if (const auto it = j.find("topology"); it != j.end()) {
    const JsonPath a = at.key("topology");
    p.fabric = engine::optional_string(*it, "fabric", a);
    const auto& pairs = engine::require_array(*it, "gpu_pairs", a);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const JsonPath pa = a.key("gpu_pairs").index(i);
      p.gpu_links.push_back({engine::require_string(pairs[i], "a", pa),
                             engine::require_string(pairs[i], "b", pa),
                             engine::require_string(pairs[i], "link", pa)});
    }
  }
}

json provenance_json(const Provenance& p) {
  json j = {{"host", p.host},
            {"gpu", p.gpu},
            {"driver_version", p.driver_version},
            {"runtime_version", p.runtime_version},
            {"nccl_version", p.nccl_version},
            {"mpi_version", p.mpi_version},
            {"date", p.date},
            {"backend", p.backend},
            {"ranks", p.ranks},
            {"nodes", p.nodes},
            {"sources", p.sources}};
  if (!p.devices.empty()) j["devices"] = devices_json(p);
  if (!p.fabric.empty() || !p.gpu_links.empty()) j["topology"] = topology_json(p);
  return j;
}

Provenance provenance_from(const json& j, const JsonPath& at) {
  Provenance p;
  p.host = engine::optional_string(j, "host", at);
  p.gpu = engine::optional_string(j, "gpu", at);
  p.driver_version = engine::optional_string(j, "driver_version", at);
  p.runtime_version = engine::optional_string(j, "runtime_version", at);
  p.nccl_version = engine::optional_string(j, "nccl_version", at);
  p.mpi_version = engine::optional_string(j, "mpi_version", at);
  p.date = engine::require_string(j, "date", at);
  p.backend = engine::require_string(j, "backend", at);
  if (p.backend != "cuda" && p.backend != "mpi" && p.backend != "nccl-tests")
    at.key("backend").fail("unknown backend '" + p.backend + "' (allowed: cuda, mpi, nccl-tests)");
  p.ranks = static_cast<std::uint32_t>(engine::require_count(j, "ranks", at));
  p.nodes = static_cast<std::uint32_t>(engine::require_count(j, "nodes", at));
  if (const auto it = j.find("sources"); it != j.end()) {
    if (!it->is_array()) at.key("sources").fail("expected an array of file names");
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) at.key("sources").index(i).fail("expected a string");
      p.sources.push_back((*it)[i].get<std::string>());
    }
  }
  inventory_from(j, at, p);
  return p;
}

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
  return {{"format", kProfileFormat},
          {"version", kProfileVersion},
          {"provenance", provenance_json(profile.provenance)},
          {"measurements", measurements_json(profile.measurements)},
          {"fitted",
           {{"collectives", engine::to_json(profile.collectives)},
            {"compute", models::to_json(profile.compute)}}}};
}

Profile profile_from_json(const json& doc, const std::string& file) {
  const JsonPath top(file, "");
  const std::string format = engine::require_string(doc, "format", top);
  if (format != kProfileFormat)
    top.key("format").fail("expected \"" + std::string(kProfileFormat) + "\", got \"" + format +
                           "\"");
  const auto version = engine::require_count(doc, "version", top);
  if (version != static_cast<std::uint64_t>(kProfileVersion))
    top.key("version").fail("unsupported version " + std::to_string(version) +
                            " (this build reads " + std::to_string(kProfileVersion) + ")");
  Profile p;
  p.provenance = provenance_from(engine::require(doc, "provenance", top), top.key("provenance"));
  p.measurements =
      measurements_from(engine::require(doc, "measurements", top), top.key("measurements"));
  const json& fitted = engine::require(doc, "fitted", top);
  p.collectives = engine::collective_profile_from_json(
      engine::require(fitted, "collectives", top.key("fitted")), file);
  p.compute = models::compute_profile_from_json(
      engine::require(fitted, "compute", top.key("fitted")), file);
  return p;
}

Profile read_profile(const std::string& path) {
  return profile_from_json(engine::read_json_file(path), path);
}

void write_text_atomically(const std::string& text, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error(path + ": cannot create " + tmp.string() + ": " +
                               std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error(path + ": write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error(path +
                             ": cannot rename the temporary file into place: " + ec.message());
  }
}

void write_profile(const Profile& profile, const std::string& path) {
  write_text_atomically(to_json(profile).dump(2) + "\n", path);
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
