#include "models/validation_memory.hpp"

#include <algorithm>
#include <filesystem>

#include "models/memory_model.hpp"
#include "models/scenario.hpp"
#include "models/validation.hpp"

namespace clustersim::models {

std::vector<MemoryCaseResult> run_memory_validation(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<MemoryCaseResult> results;
  for (const auto& path : files) {
    MemoryCaseResult base;
    base.id = path.stem().string();
    base.file = path.string();
    Scenario sc;
    MemoryEstimate est;
    try {
      sc = load_scenario(path.string());
      est = estimate_memory_only(sc);
    } catch (const std::exception& e) {
      base.failure = e.what();
      results.push_back(base);
      continue;
    }
    for (const PublishedFigure& figure : sc.published) {
      MemoryCaseResult r = base;
      r.metric = figure.metric;
      r.published = figure.value;
      r.unit = std::string(find_published_metric(r.metric)->unit);
      r.simulated = simulated_memory(r.metric, est);
      r.error = (r.simulated - r.published) / r.published;
      r.phase = r.metric == "model_state_gb" ? "model states" : est.phase;
      results.push_back(r);
    }
  }
  return results;
}

}  // namespace clustersim::models
