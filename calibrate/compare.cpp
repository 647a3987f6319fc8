#include "calibrate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace clustersim::calibrate {

namespace {

using nlohmann::ordered_json;

const ordered_json& field(const ordered_json& j, const std::string& key, const std::string& file,
                          const std::string& where = "") {
  if (!j.is_object() || !j.contains(key))
    throw CompareError(file + ": no key '" + where + key + "'");
  return j.at(key);
}

double number(const ordered_json& j, const std::string& key, const std::string& file,
              const std::string& where = "") {
  const ordered_json& v = field(j, key, file, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw CompareError(file + ": '" + where + key + "' is " + v.dump() +
                       "; allowed: a number of seconds >= 0");
  return v.get<double>();
}

std::string text(double s) {
  char buf[64];
  const double a = std::fabs(s);
  if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.4g s", s);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g us", s * 1e6);
  return buf;
}

}  // namespace

std::vector<OpError> largest_errors(std::vector<OpError> errors, std::size_t top) {
  std::stable_sort(errors.begin(), errors.end(), [](const OpError& a, const OpError& b) {
    return std::fabs(a.error_s()) > std::fabs(b.error_s());
  });
  errors.resize(std::min(top, errors.size()));
  return errors;
}

Comparison compare_results(const ordered_json& predicted, const ordered_json& measured,
                           const std::string& predicted_name, const std::string& measured_name,
                           std::size_t top) {
  Comparison c;
  const std::string ps = field(predicted, "scenario", predicted_name).dump();
  const std::string ms = field(measured, "scenario", measured_name).dump();
  if (ps != ms)
    throw CompareError(measured_name + ": scenario " + ms + " is not the predicted one (" + ps +
                       " in " + predicted_name + ")");
  c.scenario =
      predicted.at("scenario").is_string() ? predicted.at("scenario").get<std::string>() : ps;
  c.iteration = {"iteration", number(predicted, "iteration_time_s", predicted_name),
                 number(measured, "iteration_time_s", measured_name)};
  const ordered_json& pb = field(predicted, "breakdown_s", predicted_name);
  const ordered_json& mb = field(measured, "breakdown_s", measured_name);
  if (!pb.is_object()) throw CompareError(predicted_name + ": 'breakdown_s' is not an object");
  for (const auto& [key, value] : pb.items())
    c.categories.push_back({key, number(pb, key, predicted_name, "breakdown_s."),
                            number(mb, key, measured_name, "breakdown_s.")});

  const ordered_json& ops = field(measured, "ops", measured_name);
  if (!ops.is_array())
    throw CompareError(measured_name +
                       ": 'ops' is not a list (is it the JSON of `clustersim "
                       "execute`?)");
  std::vector<OpError> all;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ordered_json& op = ops[i];
    const std::string where = "ops[" + std::to_string(i) + "].";
    OpError e;
    e.id = field(op, "id", measured_name, where).get<std::uint64_t>();
    e.rank = field(op, "rank", measured_name, where).get<std::uint64_t>();
    e.label = field(op, "label", measured_name, where).get<std::string>();
    e.category = field(op, "category", measured_name, where).get<std::string>();
    e.kind = field(op, "kind", measured_name, where).get<std::string>();
    e.stream = field(op, "stream", measured_name, where).get<std::string>();
    e.predicted_s = number(op, "predicted_end_s", measured_name, where) -
                    number(op, "predicted_start_s", measured_name, where);
    e.measured_s =
        number(op, "end_s", measured_name, where) - number(op, "start_s", measured_name, where);
    all.push_back(std::move(e));
  }
  c.ops_compared = all.size();
  c.largest = largest_errors(std::move(all), top);
  return c;
}

void print_comparison(std::ostream& out, const Comparison& c) {
  char buf[256];
  out << "compare " << c.scenario << ": error = predicted - measured (negative: predicted "
      << "too fast)\n";
  std::snprintf(buf, sizeof buf, "  %-22s %12s %12s %12s %9s\n", "", "predicted", "measured",
                "error", "error %");
  out << buf;
  auto row = [&](const Figure& f, const std::string& name) {
    std::snprintf(buf, sizeof buf, "  %-22s %12s %12s %12s %+8.1f%%\n", name.c_str(),
                  text(f.predicted_s).c_str(), text(f.measured_s).c_str(),
                  text(f.error_s()).c_str(), f.relative() * 100);
    out << buf;
  };
  row(c.iteration, "iteration time");
  Figure sum{"sum", 0, 0};
  for (const Figure& f : c.categories) {
    row(f, "  " + f.name);
    sum.predicted_s += f.predicted_s;
    sum.measured_s += f.measured_s;
  }
  row(sum, "  sum of categories");
  out << "  largest per-op errors (" << c.largest.size() << " of " << c.ops_compared << " ops):\n";
  for (const OpError& e : c.largest) {
    std::snprintf(buf, sizeof buf, "    op %-6llu rank %-3llu %-10s %-28s %10s %10s %10s\n",
                  static_cast<unsigned long long>(e.id), static_cast<unsigned long long>(e.rank),
                  e.category.c_str(), e.label.substr(0, 28).c_str(), text(e.predicted_s).c_str(),
                  text(e.measured_s).c_str(), text(e.error_s()).c_str());
    out << buf;
  }
}

nlohmann::ordered_json comparison_to_json(const Comparison& c) {
  auto figure = [](const Figure& f) {
    return nlohmann::ordered_json{{"predicted_s", f.predicted_s},
                                  {"measured_s", f.measured_s},
                                  {"error_s", f.error_s()},
                                  {"relative_error", f.relative()}};
  };
  nlohmann::ordered_json j{{"scenario", c.scenario},
                           {"iteration_time", figure(c.iteration)},
                           {"categories", nlohmann::ordered_json::object()},
                           {"ops_compared", c.ops_compared},
                           {"largest_op_errors", nlohmann::ordered_json::array()}};
  for (const Figure& f : c.categories)
    j["categories"][f.name] = figure(f);
  for (const OpError& e : c.largest)
    j["largest_op_errors"].push_back({{"id", e.id},
                                      {"rank", e.rank},
                                      {"label", e.label},
                                      {"category", e.category},
                                      {"kind", e.kind},
                                      {"stream", e.stream},
                                      {"predicted_s", e.predicted_s},
                                      {"measured_s", e.measured_s},
                                      {"error_s", e.error_s()}});
  return j;
}

ordered_json merged_trace(const ordered_json& measured, const std::string& measured_name) {
  const ordered_json& ops = field(measured, "ops", measured_name);
  ordered_json events = ordered_json::array();
  std::map<std::uint64_t, bool> ranks;
  std::map<std::pair<std::uint64_t, std::string>, int> threads;  // (pid, stream) -> tid
  auto tid_of = [&](std::uint64_t pid, const std::string& stream) {
    const auto [it, added] = threads.try_emplace({pid, stream}, static_cast<int>(threads.size()));
    if (added)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", pid},
                        {"tid", it->second},
                        {"args", {{"name", stream}}}});
    return it->second;
  };
  for (const ordered_json& op : ops) {
    const auto rank = op.at("rank").get<std::uint64_t>();
    ranks[rank] = true;
    const std::string stream = op.at("stream").get<std::string>();
    for (const bool predicted : {true, false}) {
      const std::uint64_t pid = 2 * rank + (predicted ? 0 : 1);
      const double start = op.at(predicted ? "predicted_start_s" : "start_s").get<double>();
      const double end = op.at(predicted ? "predicted_end_s" : "end_s").get<double>();
      events.push_back({{"ph", "X"},
                        {"name", op.at("label")},
                        {"cat", op.at("category")},
                        {"pid", pid},
                        {"tid", tid_of(pid, stream)},
                        {"ts", start * 1e6},
                        {"dur", std::max(0.0, end - start) * 1e6},
                        {"args", {{"op", op.at("id")}, {"kind", op.at("kind")}}}});
    }
  }
  for (const auto& [rank, unused] : ranks)
    for (const bool predicted : {true, false}) {
      const std::uint64_t pid = 2 * rank + (predicted ? 0 : 1);
      events.push_back({{"ph", "M"},
                        {"name", "process_name"},
                        {"pid", pid},
                        {"args",
                         {{"name", "rank " + std::to_string(rank) +
                                       (predicted ? " predicted" : " measured")}}}});
      events.push_back({{"ph", "M"},
                        {"name", "process_sort_index"},
                        {"pid", pid},
                        {"args", {{"sort_index", pid}}}});
    }
  return ordered_json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace clustersim::calibrate
