#include "models/calibration_profile.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/calibration/json_fields.hpp"

namespace clustersim::models {

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

}  // namespace

CalibrationProfile calibration_profile_from_json(const json& doc, const std::string& file) {
  const JsonPath top(file, "");
  if (!doc.is_object()) top.fail("expected a JSON object (a clustersim calibration profile)");
  const std::string format = engine::require_string(doc, "format", top);
  if (format != kProfileFormat)
    top.key("format").fail("expected \"" + std::string(kProfileFormat) + "\", got \"" + format +
                           "\"");
  const auto version = engine::require_count(doc, "version", top);
  if (version != static_cast<std::uint64_t>(kProfileVersion))
    top.key("version").fail("unsupported version " + std::to_string(version) +
                            " (this build reads " + std::to_string(kProfileVersion) + ")");
  CalibrationProfile p;
  p.provenance = provenance_from(engine::require(doc, "provenance", top), top.key("provenance"));
  const json& fitted = engine::require(doc, "fitted", top);
  p.collectives = engine::collective_profile_from_json(
      engine::require(fitted, "collectives", top.key("fitted")), file);
  p.compute =
      compute_profile_from_json(engine::require(fitted, "compute", top.key("fitted")), file);
  return p;
}

CalibrationProfile read_calibration_profile(const std::string& path) {
  return calibration_profile_from_json(engine::read_json_file(path), path);
}

json to_json(const CalibrationProfile& profile) {
  return {{"format", kProfileFormat},
          {"version", kProfileVersion},
          {"provenance", provenance_json(profile.provenance)},
          {"fitted",
           {{"collectives", engine::to_json(profile.collectives)},
            {"compute", to_json(profile.compute)}}}};
}

}  // namespace clustersim::models
