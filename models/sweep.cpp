#include "models/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <mutex>

#include "engine/network/network_model.hpp"
#include "engine/sanitizer.hpp"
#include "models/parallel_tasks.hpp"
#include "models/result_json.hpp"
#include "models/sweep_process.hpp"

namespace clustersim::models {

namespace {

// A sweep larger than this is a typo (1..1e9), not a plan.
constexpr std::size_t kMaxPoints = 1'000'000;

[[noreturn]] void bad_vary(std::string_view vary, const std::string& why) {
  throw ScenarioError("--vary " + std::string(vary) + ": " + why +
                      "; allowed: KEY=V1,V2,... with ranges A..B, A..B+STEP, A..BxFACTOR");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

// A number of a range, strictly (no trailing text).
double range_number(std::string_view vary, std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    bad_vary(vary, "'" + std::string(text) + "' is not a number");
  return value;
}

bool is_integer(double v) {
  return std::floor(v) == v && std::abs(v) < 1e15;
}

std::string format_number(double v, bool integers) {
  if (integers) return std::to_string(static_cast<long long>(v));
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// Expands "A..B", "A..B+S" or "A..BxF" into its values.
void expand_range(std::string_view vary, std::string_view item, std::size_t dots,
                  std::vector<std::string>& out) {
  const double first = range_number(vary, item.substr(0, dots));
  std::string_view rest = item.substr(dots + 2);
  const std::size_t op = rest.find_first_of("+x");
  const double last = range_number(vary, rest.substr(0, op));
  const bool geometric = op != std::string_view::npos && rest[op] == 'x';
  const double step = op == std::string_view::npos ? 1.0 : range_number(vary, rest.substr(op + 1));
  if (last < first) bad_vary(vary, "range " + std::string(item) + " ends before it starts");
  if (geometric && (step <= 1.0 || first <= 0.0))
    bad_vary(vary, "range " + std::string(item) + " needs a factor above 1 and a start above 0");
  if (!geometric && step <= 0.0)
    bad_vary(vary, "range " + std::string(item) + " needs a step above 0");
  const bool integers = is_integer(first) && is_integer(step);
  // A relative tolerance keeps 0.1..0.3+0.1 from losing its last value to rounding.
  const double tolerance = 1e-9 * std::max(std::abs(last), 1.0);
  for (double v = first; v <= last + tolerance; v = geometric ? v * step : v + step) {
    out.push_back(format_number(v, integers));
    if (out.size() > kMaxPoints) bad_vary(vary, "range " + std::string(item) + " is too long");
  }
}

}  // namespace

SweepAxis parse_sweep_axis(std::string_view vary) {
  const std::size_t eq = vary.find('=');
  if (eq == std::string_view::npos) bad_vary(vary, "no '='");
  SweepAxis axis{std::string(trim(vary.substr(0, eq))), {}};
  if (axis.key.empty()) bad_vary(vary, "no key before '='");
  std::string_view list = vary.substr(eq + 1);
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (item.empty()) bad_vary(vary, "an empty value");
    if (const std::size_t dots = item.find(".."); dots != std::string_view::npos)
      expand_range(vary, item, dots, axis.values);
    else
      axis.values.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return axis;
}

std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes) {
  std::size_t count = 1;
  for (const SweepAxis& axis : axes) {
    count *= axis.values.size();
    if (count > kMaxPoints)
      throw ScenarioError("--vary: more than " + std::to_string(kMaxPoints) +
                          " points in the product; allowed: fewer values");
  }
  std::vector<SweepPoint> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    points[i].index = i;
    points[i].values.resize(axes.size());
    // The last axis varies fastest, as nested loops written in --vary order.
    std::size_t rest = i;
    for (std::size_t a = axes.size(); a-- > 0;) {
      points[i].values[a] = axes[a].values[rest % axes[a].values.size()];
      rest /= axes[a].values.size();
    }
  }
  return points;
}

std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point) {
  std::vector<std::string> overrides;
  for (std::size_t a = 0; a < axes.size(); ++a)
    overrides.push_back(axes[a].key + "=" + point.values[a]);
  return overrides;
}

std::string_view to_string(SweepStatus status) {
  switch (status) {
    case SweepStatus::ok:
      return "ok";
    case SweepStatus::invalid:
      return "invalid";
    case SweepStatus::failed:
      return "failed";
  }
  return "failed";
}

namespace {

RunRequest point_request(const SweepRequest& request, const SweepPoint& point) {
  RunRequest run;
  run.scenario = request.base.scenario;
  run.text = request.base.text;
  run.network = request.base.network;
  run.cancel = request.cancel;
  run.overrides = request.base.overrides;
  run.record_starts = false;  // a sweep writes no trace: `fold: auto` may fold with the check
  for (std::string& o : point_overrides(request.axes, point))
    run.overrides.push_back(std::move(o));
  return run;
}

// The result JSON's scalars as "a.b.c" keys; lists (links, notes, the memory timeline) and the
// wall time are left out, so a row is the same whichever machine ran it.
void flatten(const nlohmann::ordered_json& json, const std::string& prefix,
             nlohmann::ordered_json& out) {
  for (const auto& [key, value] : json.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      flatten(value, path, out);
    else if (!value.is_array() && path != "simulator.wall_s")
      out[path] = value;
  }
}

}  // namespace

std::optional<std::string> validate_sweep_point(const SweepRequest& request, SweepPoint& point) {
  const RunRequest run = point_request(request, point);
  try {
    const Scenario sc = run.text ? parse_scenario(*run.text, run.scenario, run.overrides)
                                 : load_scenario(run.scenario, run.overrides);
    // SimGrid's engine keeps its clock for the life of the process, so a simgrid point runs in
    // a child process of its own (docs/network.md, models/sweep_process.hpp).
    const auto* entry =
        engine::find_network_model(run.network.value_or(sc.simulation.network_model));
    point.own_process = entry != nullptr && entry->once_per_process;
  } catch (const ScenarioError& e) {
    return std::string(e.what());
  } catch (const std::exception&) {
    // Not the user's input (a file that vanished, memory): the run meets it again and lists
    // the point as failed with its reason.
  }
  return std::nullopt;
}

namespace {

SweepRow run_sweep_point_here(const SweepRequest& request, const SweepPoint& point) {
  SweepRow row{point.index, point.values, SweepStatus::ok, {}, nlohmann::ordered_json::object()};
  try {
    const Prediction p = predict(point_request(request, point));
    flatten(result_to_json(p.output.result, /*reproducible=*/true), "", row.result);
  } catch (const ScenarioError& e) {
    row.status = SweepStatus::invalid;
    row.reason = e.what();
  } catch (const std::exception& e) {
    row.status = SweepStatus::failed;
    row.reason = e.what();
  }
  return row;
}

}  // namespace

SweepRow run_sweep_point(const SweepRequest& request, const SweepPoint& point) {
  if (!point.own_process) return run_sweep_point_here(request, point);
  return run_row_in_child_process(
      point, [&request, &point] { return run_sweep_point_here(request, point); }, request.cancel);
}

std::vector<SweepBest> best_points(const std::vector<SweepRow>& rows) {
  std::vector<SweepBest> best;
  for (const auto& [objective, minimize] : {std::pair{"iteration_time_s", true},
                                            {"tokens_per_s", false},
                                            {"memory.headroom_bytes", false}}) {
    std::optional<SweepBest> found;
    for (const SweepRow& row : rows) {
      // A figure the workload cannot give is null (a Chakra workload's tokens_per_s).
      if (row.status != SweepStatus::ok || !row.result.contains(objective) ||
          !row.result[objective].is_number())
        continue;
      if (row.result.value("memory.fits", true) == false) continue;
      const double v = row.result[objective].get<double>();
      // Strict comparison: the lowest index wins a tie, whatever order rows arrived in.
      if (!found || (minimize ? v < found->value : v > found->value))
        found = SweepBest{objective, minimize, row.index, v};
    }
    if (found) best.push_back(*found);
  }
  return best;
}

namespace {

void run_points_on_thread_pool(const SweepRequest& request, const std::vector<SweepPoint>& todo,
                               const std::function<void(SweepRow)>& done, bool one_thread) {
  run_tasks_in_parallel(todo.size(), one_thread ? 1 : request.jobs, [&](std::size_t i) {
    if (request.cancel && request.cancel->load()) return;
    done(run_sweep_point(request, todo[i]));
  });
}

// AddressSanitizer's allocator (clang 14's) takes no lock around fork(), unlike glibc's malloc:
// a child forked while another thread allocates (reading its own child's pipe) inherits the
// allocator's lock held and hangs in its first allocation (seen in 1 of 13 runs of
// SimgridSweep.AChildThatFailsToLoadSimgridGivesAFailedRowWithTheReason). Under it the children
// are forked from one thread, one at a time.
constexpr bool kForkFromOneThread = engine::kAddressSanitizer;

// Points that run here first, then those that fork a child each (as many children at once as
// threads): a child is then never forked while another thread simulates, whose locks (a static's
// initialisation, a cache's mutex) it would inherit held.
void run_on_thread_pool(const SweepRequest& request, const std::vector<SweepPoint>& todo,
                        const std::function<void(SweepRow)>& done) {
  std::vector<SweepPoint> here, forked;
  for (const SweepPoint& point : todo)
    (point.own_process ? forked : here).push_back(point);
  run_points_on_thread_pool(request, here, done, false);
  run_points_on_thread_pool(request, forked, done, kForkFromOneThread);
}

}  // namespace

SweepResult run_sweep(const SweepRequest& request, const PointExecutor& executor) {
  SweepResult result;
  result.scenario = request.base.scenario;
  result.axes = request.axes;
  const std::vector<SweepPoint> points = sweep_points(request.axes);
  std::vector<std::optional<SweepRow>> rows(points.size());
  for (const SweepRow& row : request.resumed)
    if (row.index < rows.size() && row.values == points[row.index].values) {
      rows[row.index] = row;
      ++result.resumed;
    }

  std::mutex mutex;
  std::size_t finished = result.resumed;
  const auto finish = [&](SweepRow row) {
    std::lock_guard lock(mutex);
    const std::size_t index = row.index;
    if (request.on_row) request.on_row(row);
    rows[index] = std::move(row);
    if (request.progress) request.progress(++finished, points.size());
  };

  // Validation first: an invalid point costs no run and is listed with its reason.
  std::vector<SweepPoint> to_validate;  // validation marks the points that need a process
  for (const SweepPoint& point : points)
    if (!rows[point.index]) to_validate.push_back(point);
  std::vector<std::optional<std::string>> problems(points.size());
  run_tasks_in_parallel(to_validate.size(), request.jobs, [&](std::size_t i) {
    problems[to_validate[i].index] = validate_sweep_point(request, to_validate[i]);
  });
  std::vector<SweepPoint> todo;
  for (const SweepPoint& point : to_validate) {
    if (problems[point.index])
      finish(SweepRow{point.index, point.values, SweepStatus::invalid, *problems[point.index],
                      nlohmann::ordered_json::object()});
    else
      todo.push_back(point);
  }
  (executor ? executor : PointExecutor(run_on_thread_pool))(request, todo, finish);

  for (std::optional<SweepRow>& row : rows)
    if (row) result.rows.push_back(std::move(*row));  // points cancelled before they ran are absent
  result.best = best_points(result.rows);
  return result;
}

}  // namespace clustersim::models
