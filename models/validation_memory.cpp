#include "models/validation_memory.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "models/memory_model.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

namespace {

struct Metric {
  const char* name;
  const char* unit;
  double scale;  // bytes per unit
};

constexpr Metric kMetrics[] = {
    {"model_state_gb", "GB", 1e9},          {"peak_memory_active_gib", "GiB", 1024.0 * 1024 * 1024},
    {"max_memory_allocated_gb", "GB", 1e9}, {"peak_memory_gb", "GB", 1e9},
    {"peak_memory_reserved_gb", "GB", 1e9}, {"nvidia_smi_used_mib", "MiB", 1024.0 * 1024},
};

double simulated_bytes(const std::string& metric, const MemoryEstimate& m) {
  if (metric == "model_state_gb") return m.model_states;
  if (metric == "peak_memory_reserved_gb") return m.reserved();
  if (metric == "nvidia_smi_used_mib")
    return m.reserved() + m.overheads.cuda_context + m.overheads.nccl;
  return m.allocated();
}

}  // namespace

std::string strip_published(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool skipping = false;
  while (std::getline(in, line)) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '-';
    if (top_level) skipping = line.rfind("published:", 0) == 0;
    if (!skipping) out += line + "\n";
  }
  return out;
}

std::vector<MemoryCaseResult> run_memory_validation(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<MemoryCaseResult> results;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    MemoryCaseResult base;
    base.id = path.stem().string();
    base.file = path.string();
    YAML::Node published;
    try {
      published = YAML::Load(text)["published"];
    } catch (const std::exception& e) {
      base.failure = e.what();
      results.push_back(base);
      continue;
    }
    std::optional<MemoryEstimate> est;
    try {
      const Scenario sc = parse_scenario(strip_published(text), path.string());
      est = estimate_memory_only(sc);
    } catch (const std::exception& e) {
      base.failure = e.what();
    }
    for (const auto& figure : published) {
      MemoryCaseResult r = base;
      r.metric = figure["metric"].as<std::string>("");
      r.published = figure["value"].as<double>(0.0);
      const auto* metric = std::find_if(std::begin(kMetrics), std::end(kMetrics),
                                        [&](const Metric& m) { return r.metric == m.name; });
      if (metric == std::end(kMetrics)) {
        if (r.failure.empty()) r.failure = "unknown metric '" + r.metric + "'";
      } else {
        r.unit = metric->unit;
      }
      if (r.failure.empty() && est) {
        r.simulated = simulated_bytes(r.metric, *est) / metric->scale;
        r.error = r.published != 0 ? (r.simulated - r.published) / r.published : 0.0;
        r.phase = r.metric == "model_state_gb" ? "model states" : est->phase;
      }
      results.push_back(r);
    }
  }
  return results;
}

}  // namespace clustersim::models
