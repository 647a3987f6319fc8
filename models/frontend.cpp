#include "models/frontend.hpp"

#include <filesystem>

#include "engine/io/atomic_file.hpp"
#include "engine/trace.hpp"
#include "models/result_json.hpp"

namespace clustersim::models {

Prediction predict(const RunRequest& request) {
  if (request.progress) request.progress("loading", 0.0);
  Prediction p{load_scenario(request.scenario, request.overrides), {}};
  RunOptions options;
  options.network = request.network;
  options.record_link_rates = request.record_link_rates;
  options.progress = request.progress;
  options.cancel = request.cancel;
  p.output = run_scenario(p.scenario, options);
  return p;
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs,
                       std::string_view flag) {
  namespace fs = std::filesystem;
  const std::string what = std::string(flag) + " " + path;
  std::error_code ec;
  for (const std::string& input : inputs)
    if (fs::equivalent(path, input, ec))
      throw OutputPathError(what + " is an input (" + input +
                            "); refusing to overwrite it; allowed: a new or output file");
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  if (!fs::is_directory(dir, ec))
    throw OutputPathError(what + ": directory '" + dir.string() +
                          "' does not exist; allowed: a file in an existing directory");
  if (fs::is_directory(path, ec))
    throw OutputPathError(what + " is a directory; allowed: a file path");
}

void write_result_json(const Prediction& p, const std::string& path, bool reproducible) {
  check_output_path(path, p.scenario.inputs, "result JSON");
  engine::write_file_atomically(path, [&](std::ostream& os) {
    os << result_to_json(p.output.result, reproducible).dump(2) << "\n";
  });
}

void write_trace(const Prediction& p, const std::string& path) {
  check_output_path(path, p.scenario.inputs, "trace");
  engine::TraceOptions trace;
  trace.counter_links = p.output.result.busiest_link_ids;
  const auto& memory = p.output.result.memory;
  if (!memory.timeline.empty()) {
    engine::CounterTrack track{"memory", static_cast<std::uint32_t>(memory.peak_rank), "bytes", {}};
    for (const auto& point : memory.timeline)
      track.points.emplace_back(engine::Time::from_seconds(point.time_s), point.bytes);
    trace.counters.push_back(std::move(track));
  }
  engine::write_file_atomically(path, [&](std::ostream& os) {
    engine::write_trace(os, p.output.built.schedule, p.output.timeline, p.output.topology, trace);
  });
}

}  // namespace clustersim::models
