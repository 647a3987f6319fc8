// A small typed reader over yaml-cpp nodes for the scenario file. Each value knows its key path
// ("parallel.tp", "model.layers[2].params") and where it was written, so every error reads
// "FILE:LINE:COL: KEY.PATH: what is wrong; allowed: ..." (or cites the --set override that
// supplied it). A MapReader learns the allowed keys as they are asked for and rejects the rest,
// suggesting the nearest allowed key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <climits>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/units.hpp"
#include "models/scenario.hpp"

namespace clustersim::models::yaml {

// "FILE:LINE:COL", or just "FILE" when the line is unknown.
std::string format_location(const SourceLocation& where);
// Throws ScenarioError "LOCATION: KEY: message" ("LOCATION: message" without a key).
[[noreturn]] void throw_error(const SourceLocation& where, const std::string& key,
                              const std::string& message);
// The candidate closest to `word` by edit distance, or "" when none is close enough to be a typo.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);
// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// Where the text came from: the file name, the --set overrides applied to its tree, and the
// locations of every key read (filled into the Scenario).
class Source {
 public:
  Source(std::string file, std::map<std::string, SourceLocation>* locations)
      : file_(std::move(file)), locations_(locations) {}

  // An override replaced `path` (and everything under it); `text` is the whole "--set ..." flag.
  void add_override(std::string path, std::string text);
  // The override that supplied `path`, if any (the last one applied wins).
  const std::string* override_for(const std::string& path) const;
  SourceLocation locate(const std::string& path, const YAML::Mark& mark) const;
  void record(const std::string& path, const YAML::Mark& mark);
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::pair<std::string, std::string>> overrides_;  // (path, flag) in order
  std::map<std::string, SourceLocation>* locations_;
};

class MapReader;

class Value {
 public:
  Value(Source& source, YAML::Node node, std::string path)
      : source_(&source), node_(std::move(node)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  Source& source() const { return *source_; }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  // True when a --set override supplied this value.
  bool from_override() const { return source_->override_for(path_) != nullptr; }

  std::string text() const;  // any single value
  long integer(long min, long max = LONG_MAX) const;
  int count(int min, int max = INT_MAX) const;          // integer() narrowed to int
  double number(double min, double max = 1e300) const;  // plain number, no unit
  bool boolean() const;                                 // true | false
  double size() const;                                  // "25MB" -> bytes
  engine::Bandwidth bandwidth() const;                  // "200Gb/s" -> bytes/s
  engine::Time time() const;                            // "1us"
  MapReader map() const;
  std::vector<Value> sequence() const;

  // One of `choices` by name; otherwise an error listing them.
  template <class E>
  E choice(std::initializer_list<std::pair<std::string_view, E>> choices) const {
    const std::string t = text();
    std::vector<std::string> names;
    for (const auto& [name, value] : choices) {
      if (name == t) return value;
      names.emplace_back(name);
    }
    fail_choice(t, names);
  }

  // One of a name table's entries (engine/names.hpp); otherwise an error listing them.
  template <class E, std::size_t N>
  E choice(const engine::NameTable<E, N>& table, std::string_view what = "value") const {
    const std::string t = text();
    if (const auto v = table.parse(t)) return *v;
    fail_choice(t, table.names(), what);
  }

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_choice(const std::string& got, const std::vector<std::string>& allowed,
                                std::string_view what = "value") const;
  SourceLocation location() const { return source_->locate(path_, node_.Mark()); }

 private:
  Source* source_;
  YAML::Node node_;
  std::string path_;
};

class MapReader {
 public:
  // `node` must be a map (an error otherwise); `path` is its key path ("" for the document).
  MapReader(Source& source, YAML::Node node, std::string path);

  // The value of `key` if written; either way `key` becomes an allowed key.
  std::optional<Value> get(std::string_view key);
  // The value of `key`; an error saying `what` it should be when missing.
  Value require(std::string_view key, std::string_view what);
  bool has(std::string_view key) const;
  // Fails on the first key that was never asked for.
  void finish() const;
  [[noreturn]] void fail(const std::string& message) const;  // about the map as a whole
  const std::string& path() const { return path_; }
  std::string child_path(std::string_view key) const;

 private:
  [[noreturn]] void unknown_key(std::size_t entry) const;

  Source* source_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;  // (key, value) in file order
  std::vector<YAML::Mark> key_marks_;
  std::vector<std::string> allowed_;
};

}  // namespace clustersim::models::yaml
