#include "engine/calibration/json_fields.hpp"

#include <cmath>
#include <fstream>

namespace clustersim::engine {

void JsonPath::fail(std::string_view what) const {
  throw ProfileError(str() + ": " + std::string(what));
}

const nlohmann::json& require(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  if (!obj.is_object()) at.fail("expected an object");
  const auto it = obj.find(std::string(key));
  if (it == obj.end()) at.key(key).fail("missing key");
  return *it;
}

const nlohmann::json& require_array(const nlohmann::json& obj, std::string_view key,
                                    const JsonPath& at) {
  const auto& v = require(obj, key, at);
  if (!v.is_array()) at.key(key).fail("expected an array");
  return v;
}

double require_number(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  const auto& v = require(obj, key, at);
  if (!v.is_number()) at.key(key).fail("expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) at.key(key).fail("expected a finite number");
  return d;
}

double require_positive(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  const double d = require_number(obj, key, at);
  if (!(d > 0.0)) at.key(key).fail("expected a positive number, got " + std::to_string(d));
  return d;
}

std::uint64_t require_count(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  const auto& v = require(obj, key, at);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    at.key(key).fail("expected a non-negative integer");
  return v.get<std::uint64_t>();
}

std::string require_string(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  const auto& v = require(obj, key, at);
  if (!v.is_string()) at.key(key).fail("expected a string");
  return v.get<std::string>();
}

std::string optional_string(const nlohmann::json& obj, std::string_view key, const JsonPath& at) {
  if (!obj.is_object()) at.fail("expected an object");
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) at.key(key).fail("expected a string");
  return it->get<std::string>();
}

nlohmann::json read_json_file(const std::string& path, std::string_view what) {
  std::ifstream in(path);
  if (!in) throw ProfileError(path + ": cannot open the " + std::string(what));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace clustersim::engine
