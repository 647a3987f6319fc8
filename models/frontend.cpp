#include "models/frontend.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/io/atomic_file.hpp"
#include "engine/trace.hpp"
#include "models/hardware.hpp"
#include "models/model_spec.hpp"
#include "models/perfetto/perfetto_reader.hpp"
#include "models/perfetto/perfetto_trace.hpp"
#include "models/result_json.hpp"

namespace clustersim::models {

Prediction predict(const RunRequest& request) {
  if (request.progress) request.progress("loading", kUnknownFraction);
  Prediction p{request.text ? parse_scenario(*request.text, request.scenario, request.overrides)
                            : load_scenario(request.scenario, request.overrides),
               {}};
  check_output_paths(request.outputs, p.scenario.inputs);
  RunOptions options;
  options.network = request.network;
  options.record_link_rates = request.record_link_rates;
  options.record_starts = request.record_starts;
  options.progress = request.progress;
  options.cancel = request.cancel;
  options.strict = request.strict;
  options.max_memory = request.max_memory;
  options.max_memory_origin = request.max_memory_origin;
  options.every_rank = request.every_rank;
  p.output = run_scenario(p.scenario, options);
  return p;
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs,
                       std::string_view flag) {
  namespace fs = std::filesystem;
  const std::string what = std::string(flag) + " " + path;
  if (path.empty()) throw OutputPathError(std::string(flag) + ": an empty path; allowed: a file");
  std::error_code ec;
  for (const std::string& input : inputs)
    if (fs::equivalent(path, input, ec))
      throw OutputPathError(what + " is an input (" + input +
                            "); refusing to overwrite it; allowed: a new or output file");
  if (engine::names_a_descriptor(path)) {
    if (::access(path.c_str(), W_OK) != 0)
      throw OutputPathError(what + " is not writable (" + std::strerror(errno) +
                            "); allowed: a path this user can write");
    return;
  }
  // A link is written through (engine/io/atomic_file.hpp): check what it points to.
  const fs::path target =
      fs::is_symlink(path, ec) ? fs::weakly_canonical(path, ec) : fs::path(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : ".";
  if (!fs::is_directory(dir, ec))
    throw OutputPathError(what + ": directory '" + dir.string() +
                          "' does not exist; allowed: a file in an existing directory");
  const auto status = fs::status(target, ec);
  if (fs::is_directory(status))
    throw OutputPathError(what + " is a directory; allowed: a file path");
  if (fs::is_socket(status))
    throw OutputPathError(what + " is a socket; allowed: a file, a device or a FIFO");
  // A regular file is replaced by renaming a temporary file in its folder; a device or a FIFO is
  // opened and written into.
  const bool special = fs::exists(status) && !fs::is_regular_file(status);
  const fs::path needs_write = special ? target : dir;
  if (::access(needs_write.c_str(), W_OK) != 0)
    throw OutputPathError(what + ": " + (special ? "'" : "directory '") + needs_write.string() +
                          "' is not writable (" + std::strerror(errno) +
                          "); allowed: a path this user can write");
}

void check_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [path, flag] = outputs[i];
    check_output_path(path, inputs, flag);
    // Writing twice into /dev/null (or a terminal) destroys nothing.
    if (engine::names_a_descriptor(path) || fs::is_character_file(path, ec)) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const auto& [other, other_flag] = outputs[j];
      // Files that do not exist yet are the same when their absolute paths are.
      if (fs::equivalent(path, other, ec) || fs::weakly_canonical(fs::absolute(path, ec), ec) ==
                                                 fs::weakly_canonical(fs::absolute(other, ec), ec))
        throw OutputPathError(flag + " " + path + " is also the " + other_flag +
                              " output; one would overwrite the other; allowed: a different file "
                              "for each output");
    }
  }
}

void write_result_json(const Prediction& p, const std::string& path, bool reproducible) {
  check_output_path(path, p.scenario.inputs, "result JSON");
  engine::write_file_atomically(path,
                                [&](std::ostream& os) { os << result_json_text(p, reproducible); });
}

std::string result_json_text(const Prediction& p, bool reproducible) {
  return result_to_json(p.output.result, reproducible).dump(2) + "\n";
}

PresetNames preset_names() {
  return {gpu_names(), node_names(), model_names()};
}

void write_trace(const Prediction& p, const std::string& path) {
  write_trace(p, path, {});
}

bool is_perfetto_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".pftrace" || ext == ".perfetto-trace";
}

std::vector<engine::Rank> parse_rank_list(std::string_view text) {
  auto number = [&](std::string_view part, std::string_view whole) {
    engine::Rank v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw std::invalid_argument("'" + std::string(whole) +
                                  "' is not a rank or a range of ranks (e.g. 0-7,512)");
    return v;
  };
  std::vector<engine::Rank> ranks;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view part = text.substr(begin, comma - begin);
    const std::size_t dash = part.find('-');
    const engine::Rank first = number(part.substr(0, dash), part);
    const engine::Rank last =
        dash == std::string_view::npos ? first : number(part.substr(dash + 1), part);
    if (last < first)
      throw std::invalid_argument("'" + std::string(part) + "': a range goes from low to high");
    // Bounded: a rank past the run's is refused by check_trace_filter, this keeps the list small.
    if (last - first >= (1u << 24))
      throw std::invalid_argument("'" + std::string(part) + "': at most 16,777,216 ranks");
    for (engine::Rank r = first;; ++r) {
      ranks.push_back(r);
      if (r == last) break;
    }
    begin = comma + 1;
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

void check_trace_filter(const Prediction& p, const engine::TraceFilter& filter) {
  const engine::Schedule& s = p.output.built.schedule;
  for (engine::Rank r : filter.ranks) {
    if (r >= s.num_ranks)
      throw std::invalid_argument("rank " + std::to_string(r) + " does not exist: the run has " +
                                  std::to_string(s.num_ranks) + " (0 to " +
                                  std::to_string(s.num_ranks - 1) + ")");
    if (!s.simulated(r))
      throw std::invalid_argument(
          "rank " + std::to_string(r) + " was folded onto rank " + std::to_string(s.mirror[r]) +
          " (simulation.fold): trace that rank, or run with --set simulation.fold=none");
  }
  if (filter.from > filter.to)
    throw std::invalid_argument("the window ends before it starts (--trace-from after --trace-to)");
}

void write_trace(const Prediction& p, const std::string& path, const ProgressFn& progress,
                 const engine::TraceFilter& filter, bool compress) {
  check_output_path(path, p.scenario.inputs, "trace");
  check_trace_filter(p, filter);
  engine::check_starts(p.output.built.schedule, p.output.timeline);
  engine::TraceOptions trace;
  trace.filter = filter;
  trace.compress = compress;
  if (progress) trace.progress = [&progress](double f) { progress("writing trace", f); };
  trace.counter_links = p.output.result.busiest_link_ids;
  const auto& memory = p.output.result.memory;
  if (!memory.timeline.empty()) {
    engine::CounterTrack track{"memory", static_cast<std::uint32_t>(memory.peak_rank), "bytes", {}};
    for (const auto& point : memory.timeline)
      track.points.emplace_back(engine::Time::from_seconds(point.time_s), point.bytes);
    trace.counters.push_back(std::move(track));
  }
  const bool perfetto = is_perfetto_path(path);
  engine::write_file_atomically(path, [&](std::ostream& os) {
    if (perfetto)
      write_perfetto_trace(os, p.output.built.schedule, p.output.timeline, p.output.topology,
                           trace);
    else
      engine::write_trace(os, p.output.built.schedule, p.output.timeline, p.output.topology, trace);
  });
}

engine::TraceContents read_trace(const std::string& path, const ProgressFn& progress,
                                 const std::atomic<bool>* cancel) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!in || ec)
    throw engine::TraceError(path + ": cannot open the trace: " +
                             (ec ? ec.message() : std::string(std::strerror(errno))));
  engine::TraceReadOptions options;
  options.size_bytes = size;
  options.progress = [&](double fraction) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed))
      throw Cancelled("reading the trace cancelled");
    if (progress) progress("reading trace", fraction < 0 ? kUnknownFraction : fraction);
  };
  return is_perfetto_path(path) ? read_perfetto_trace(in, path, options)
                                : engine::read_trace(in, path, options);
}

bool is_trace_path(const std::string& path) {
  if (is_perfetto_path(path)) return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("\"traceEvents\"") != std::string::npos;
}

}  // namespace clustersim::models
