// A sweep's JSON and CSV (docs/sweeps.md "Outputs"), and reading the JSON back for --resume.
#include <fstream>
#include <set>
#include <sstream>

#include "engine/io/atomic_file.hpp"
#include "models/sweep.hpp"

namespace clustersim::models {

using nlohmann::ordered_json;

ordered_json row_to_json(const SweepRow& row) {
  return {{"index", row.index},
          {"values", row.values},
          {"status", to_string(row.status)},
          {"reason", row.reason},
          {"result", row.result}};
}

SweepRow row_from_json(const ordered_json& json) {
  SweepRow row;
  row.index = json.at("index").get<std::size_t>();
  row.values = json.at("values").get<std::vector<std::string>>();
  const std::string status = json.at("status").get<std::string>();
  row.status = status == "ok"        ? SweepStatus::ok
               : status == "invalid" ? SweepStatus::invalid
                                     : SweepStatus::failed;
  row.reason = json.at("reason").get<std::string>();
  row.result = json.at("result");
  return row;
}

ordered_json sweep_to_json(const SweepResult& r) {
  ordered_json axes = ordered_json::array();
  for (const SweepAxis& axis : r.axes)
    axes.push_back({{"key", axis.key}, {"values", axis.values}});
  ordered_json rows = ordered_json::array();
  for (const SweepRow& row : r.rows)
    rows.push_back(row_to_json(row));
  ordered_json best = ordered_json::object();
  for (const SweepBest& b : r.best)
    best[b.objective] = {{"index", b.index}, {"minimize", b.minimize}, {"value", b.value}};
  return {{"scenario", r.scenario}, {"axes", axes}, {"rows", rows}, {"best", best}};
}

std::vector<SweepRow> read_sweep_rows(const std::string& path, const std::vector<SweepAxis>& axes) {
  std::ifstream in(path);
  if (!in) return {};  // nothing to resume yet
  ordered_json json;
  try {
    json = ordered_json::parse(in);
    std::vector<std::string> keys;
    for (const auto& axis : json.at("axes"))
      keys.push_back(axis.at("key").get<std::string>());
    std::vector<std::string> wanted;
    for (const SweepAxis& axis : axes)
      wanted.push_back(axis.key);
    if (keys != wanted)
      throw ScenarioError("--resume " + path + ": it sweeps other keys than these --vary; " +
                          "allowed: the JSON of a sweep of the same keys");
    std::vector<SweepRow> rows;
    // Failed points (a crash, a cancelled run) are tried again; ok and invalid ones are kept.
    for (const auto& row : json.at("rows"))
      if (row.at("status") != "failed") rows.push_back(row_from_json(row));
    return rows;
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioError("--resume " + path + ": not a sweep's JSON (" + e.what() +
                        "); allowed: a file written by clustersim sweep --json");
  }
}

void write_sweep_json(const SweepResult& result, const std::string& path) {
  check_output_path(path, {result.scenario}, "--json");
  engine::write_file_atomically(
      path, [&](std::ostream& os) { os << sweep_to_json(result).dump(2) << "\n"; });
}

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_value(const ordered_json& value) {
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_null()) return "";
  return value.dump();  // numbers as JSON writes them: shortest round-trip form
}

}  // namespace

void write_sweep_csv(const SweepResult& result, const std::string& path) {
  check_output_path(path, {result.scenario}, "--csv");
  // Columns: the union of every row's result keys, in the order they first appear.
  std::vector<std::string> columns;
  std::set<std::string> seen;
  for (const SweepRow& row : result.rows)
    for (const auto& [key, value] : row.result.items())
      if (seen.insert(key).second) columns.push_back(key);
  engine::write_file_atomically(path, [&](std::ostream& os) {
    os << "index";
    for (const SweepAxis& axis : result.axes)
      os << "," << csv_field(axis.key);
    os << ",status,reason";
    for (const std::string& c : columns)
      os << "," << csv_field(c);
    os << "\n";
    for (const SweepRow& row : result.rows) {
      os << row.index;
      for (const std::string& v : row.values)
        os << "," << csv_field(v);
      os << "," << to_string(row.status) << "," << csv_field(row.reason);
      for (const std::string& c : columns)
        os << "," << (row.result.contains(c) ? csv_value(row.result[c]) : std::string());
      os << "\n";
    }
  });
}

}  // namespace clustersim::models
