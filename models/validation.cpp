#include "models/validation.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "engine/format.hpp"
#include "models/frontend.hpp"
#include "models/published_flops.hpp"
#include "models/statistics.hpp"
#include "models/units.hpp"

namespace clustersim::models {

namespace {

namespace fs = std::filesystem;

// The published figures of a file that did not load, read as plainly as possible so that the
// report can still list them.
std::vector<PublishedFigure> figures_of(const YAML::Node& root) {
  std::vector<PublishedFigure> out;
  for (const auto& item : root["published"]) {
    PublishedFigure f;
    try {
      f.metric = item["metric"].as<std::string>("?");
      f.value = item["value"].as<double>(0.0);
      f.source = item["source"].as<std::string>("");
    } catch (const YAML::Exception&) {
      f.metric = "?";
    }
    out.push_back(std::move(f));
  }
  return out;
}

TimeShares shares_of(const Result& r) {
  const double t = r.iteration_time_s;
  if (!(t > 0)) return {};
  const auto& b = r.breakdown_s;
  return {b.compute / t, b.recompute / t,
          (b.dp_comm + b.tp_comm + b.pp_comm + b.ep_comm + b.cp_comm) / t, b.idle / t};
}

ValidationSummary summarize(const std::vector<ValidationRow>& rows, std::string_view kind) {
  ValidationSummary s;
  std::vector<double> errors;
  for (const auto& row : rows) {
    if (row.kind != kind) continue;
    ++s.cases;
    if (!row.failure.empty()) {
      ++s.failed;
      continue;
    }
    const double e = std::fabs(row.error);
    errors.push_back(e);
    for (std::size_t b = 0; b < s.within.size(); ++b)
      if (e <= ValidationSummary::kWithinBounds[b]) ++s.within[b];
    if (e >= s.worst) {
      s.worst = e;
      s.worst_row = row.file + ": " + row.metric;
    }
  }
  if (!errors.empty()) s.median = median(std::move(errors));
  return s;
}

}  // namespace

double simulated_memory(std::string_view metric, const MemoryEstimate& m) {
  if (metric == "model_state_gb") return m.model_states / kGB;
  if (metric == "max_memory_allocated_gb" || metric == "peak_memory_gb") return m.allocated() / kGB;
  if (metric == "peak_memory_active_gib") return m.allocated() / kGiB;
  if (metric == "peak_memory_reserved_gb") return m.reserved() / kGB;
  if (metric == "nvidia_smi_used_mib")
    return (m.reserved() + m.overheads.cuda_context + m.overheads.nccl) / kMiB;
  throw std::invalid_argument("metric '" + std::string(metric) + "' is not a memory figure");
}

double simulated_value(std::string_view metric, const Scenario& sc, const Result& r) {
  const double gpus = r.world_size;
  if (metric == "iteration_time_s") return r.iteration_time_s;
  if (metric == "tflops_per_gpu") return r.tflops_per_gpu;
  if (metric == "mfu") return r.mfu;
  if (metric == "tokens_per_s") return r.tokens_per_s;
  if (metric == "tokens_per_s_per_gpu") return r.tokens_per_s / gpus;
  if (metric == "samples_per_s") return r.samples_per_s;
  if (metric == "samples_per_s_per_gpu") return r.samples_per_s / gpus;
  // The publisher's own count applied to the simulated throughput, as the publisher applied it
  // to the measured one (models/published_flops.hpp).
  if (metric == "model_tflops_per_gpu_causal") {
    const auto* t = std::get_if<TransformerSpec>(&sc.model.body);
    if (t == nullptr)
      sc.fail("published", "metric '" + std::string(metric) + "' needs a transformer");
    try {
      return r.tokens_per_s / gpus *
             megatron_bridge_flops_per_token(*t, sc.training.seq_len, sc.parallel.tp) / 1e12;
    } catch (const std::invalid_argument& e) {
      sc.fail("published", "metric '" + std::string(metric) + "': " + e.what());
    }
  }
  if (find_published_metric(metric) != nullptr && find_published_metric(metric)->kind == "memory")
    return simulated_memory(metric, r.memory);
  sc.fail("published", "metric '" + std::string(metric) + "' has no simulated counterpart");
}

ValidationReport run_validation(const std::string& dir, const ValidationOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::invalid_argument(dir + ": not a folder; allowed: a folder of validation cases");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());

  // Files with a `published:` list are cases; folders of nccl-tests tables (files with
  // `points:`) are replayed as collectives.
  std::vector<std::pair<fs::path, YAML::Node>> cases;
  std::vector<fs::path> collective_dirs;
  ValidationReport report;
  for (const auto& f : files) {
    try {
      YAML::Node root = YAML::LoadFile(f.string());
      if (root.IsMap() && root["published"]) cases.emplace_back(f, root);
      if (root.IsMap() && root["points"] && !root["published"] &&
          std::find(collective_dirs.begin(), collective_dirs.end(), f.parent_path()) ==
              collective_dirs.end())
        collective_dirs.push_back(f.parent_path());
    } catch (const YAML::Exception& e) {
      ValidationRow row;
      row.file = fs::relative(f, dir).string();
      row.kind = "time";
      row.failure = "invalid YAML: " + e.msg;
      report.rows.push_back(row);
    }
  }
  if (cases.empty() && report.rows.empty() && collective_dirs.empty())
    throw std::invalid_argument(dir +
                                ": holds no validation case (a .yaml file with `published:`)");

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [path, root] = cases[i];
    const std::string rel = fs::relative(path, dir).string();
    if (options.progress)
      options.progress(rel, static_cast<int>(i), static_cast<int>(cases.size()));
    if (options.cancel != nullptr && options.cancel->load())
      throw Cancelled("validation cancelled");
    RunRequest request;
    request.scenario = path.string();
    request.network = options.network;
    request.overrides = options.overrides;
    request.cancel = options.cancel;
    request.record_starts = false;  // no trace: `fold: auto` may fold with the network's check
    try {
      const Prediction p = predict(request);
      for (const PublishedFigure& f : p.scenario.published) {
        ValidationRow row{rel, p.scenario.name, f.metric, "", f.source, f.value, 0, 0, {}, ""};
        row.kind = std::string(find_published_metric(f.metric)->kind);
        row.simulated = simulated_value(f.metric, p.scenario, p.output.result);
        row.error = (row.simulated - f.value) / f.value;
        row.shares = shares_of(p.output.result);
        report.rows.push_back(std::move(row));
      }
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      for (const PublishedFigure& f : figures_of(root)) {
        const PublishedMetric* metric = find_published_metric(f.metric);
        report.rows.push_back({rel,
                               root["name"].as<std::string>(rel),
                               f.metric,
                               metric ? std::string(metric->kind) : "time",
                               f.source,
                               f.value,
                               0,
                               0,
                               {},
                               e.what()});
      }
    }
  }
  report.time = summarize(report.rows, "time");
  report.memory = summarize(report.rows, "memory");
  for (const auto& d : collective_dirs) {
    if (options.progress) options.progress(fs::relative(d, dir).string(), 0, 1);
    try {
      for (auto& c : run_collective_validation(d.string()))
        report.collectives.push_back(std::move(c));
    } catch (const std::exception& e) {  // a table that does not follow the schema: say so
      CollectiveCaseResult bad;
      bad.file = fs::relative(d, dir).string();
      bad.excluded = true;
      bad.reason = e.what();
      report.collectives.push_back(std::move(bad));
    }
  }
  // Summaries over the compared points, as the collective test counts them.
  for (const bool small : {false, true}) {
    std::vector<ValidationRow> rows;
    for (const auto& c : report.collectives) {
      if (c.excluded || c.small() != small) continue;
      ValidationRow row;
      row.file = c.file + " @ " + engine::format_bytes(c.bytes);
      row.metric = small ? "time_us" : "busbw_GBps";
      row.kind = "collective";
      row.error = c.error();
      rows.push_back(std::move(row));
    }
    (small ? report.collectives_small : report.collectives_large) = summarize(rows, "collective");
  }
  return report;
}

nlohmann::json validation_to_json(const ValidationReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : report.rows) {
    nlohmann::json row = {{"file", r.file}, {"scenario", r.name}, {"metric", r.metric},
                          {"kind", r.kind}, {"source", r.source}, {"published", r.published}};
    if (r.failure.empty()) {
      row["simulated"] = r.simulated;
      row["error"] = r.error;
      row["time_shares"] = {{"compute", r.shares.compute},
                            {"recompute", r.shares.recompute},
                            {"communication", r.shares.communication},
                            {"idle", r.shares.idle}};
    } else {
      row["failure"] = r.failure;
    }
    rows.push_back(std::move(row));
  }
  auto summary = [](const ValidationSummary& s) {
    nlohmann::json within = nlohmann::json::object();
    for (std::size_t b = 0; b < s.within.size(); ++b) {
      char key[16];
      std::snprintf(key, sizeof key, "%.2f", ValidationSummary::kWithinBounds[b]);
      within[key] = s.within[b];
    }
    return nlohmann::json{{"figures", s.cases},           {"failed", s.failed},
                          {"median_abs_error", s.median}, {"worst_abs_error", s.worst},
                          {"worst", s.worst_row},         {"within_abs_error", within}};
  };
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : report.collectives) {
    nlohmann::json point = {{"file", c.file},   {"collective", c.collective},
                            {"nodes", c.nodes}, {"gpus_per_node", c.gpus_per_node},
                            {"bytes", c.bytes}, {"excluded", c.excluded}};
    if (c.excluded) {
      point["reason"] = c.reason;
    } else {
      point["published_busbw_GBps"] = c.published_busbw_GBps;
      point["simulated_busbw_GBps"] = c.simulated_busbw_GBps;
      point["published_time_us"] = c.published_time_us;
      point["simulated_time_us"] = c.simulated_time_us;
      point["algorithm"] = c.algorithm;
      point["protocol"] = c.protocol;
      point["channels"] = c.channels;
      point["error"] = c.error();
    }
    collectives.push_back(std::move(point));
  }
  return {{"cases", rows},
          {"time", summary(report.time)},
          {"memory", summary(report.memory)},
          {"collectives", collectives},
          {"collectives_1MiB_and_up", summary(report.collectives_large)},
          {"collectives_below_1MiB", summary(report.collectives_small)}};
}

}  // namespace clustersim::models
