// Reading the calibration profile's JSON with errors that name the file and the key (DESIGN.md
// "Calibration profile"). Shared by every reader of a profile part: engine (collectives), models
// (compute) and calibrate (provenance, raw measurements).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace clustersim::engine {

// A profile that cannot be read: the message names the file and the JSON path of the bad key.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a value sits: "profile.json: fitted.collectives[2].busbw".
class JsonPath {
 public:
  JsonPath(std::string file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
  JsonPath key(std::string_view k) const {
    return {file_, path_.empty() ? std::string(k) : path_ + "." + std::string(k)};
  }
  JsonPath index(std::size_t i) const { return {file_, path_ + "[" + std::to_string(i) + "]"}; }
  [[noreturn]] void fail(std::string_view what) const;
  std::string str() const { return file_ + ": " + (path_.empty() ? "(top level)" : path_); }

 private:
  std::string file_;
  std::string path_;
};

// Each accessor checks presence and type of obj[key] (obj must be an object) and fails with the
// path and what is expected.
const nlohmann::json& require(const nlohmann::json& obj, std::string_view key, const JsonPath& at);
const nlohmann::json& require_array(const nlohmann::json& obj, std::string_view key,
                                    const JsonPath& at);
double require_number(const nlohmann::json& obj, std::string_view key, const JsonPath& at);
double require_positive(const nlohmann::json& obj, std::string_view key, const JsonPath& at);
std::uint64_t require_count(const nlohmann::json& obj, std::string_view key, const JsonPath& at);
std::string require_string(const nlohmann::json& obj, std::string_view key, const JsonPath& at);
std::string optional_string(const nlohmann::json& obj, std::string_view key, const JsonPath& at);

// Parses a whole file; a missing file or invalid JSON is a ProfileError naming the file and
// `what` it should have been.
nlohmann::json read_json_file(const std::string& path,
                              std::string_view what = "calibration profile");

}  // namespace clustersim::engine
