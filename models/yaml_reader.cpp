#include "models/yaml_reader.hpp"

#include <algorithm>
#include <cmath>

#include "models/units.hpp"

namespace clustersim::models::yaml {
namespace {

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// True when `path` is `prefix` or lies under it ("a.b" under "a", "a[0]" under "a").
bool under(const std::string& path, const std::string& prefix) {
  if (!path.starts_with(prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

}  // namespace

std::string format_location(const SourceLocation& where) {
  if (where.line <= 0) return where.file;
  return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
}

void throw_error(const SourceLocation& where, const std::string& key, const std::string& message) {
  std::string text = format_location(where) + ": ";
  if (!key.empty()) text += key + ": ";
  throw ScenarioError(text + message, where, key);
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

void Source::add_override(std::string path, std::string text) {
  overrides_.emplace_back(std::move(path), std::move(text));
}

const std::string* Source::override_for(const std::string& path) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (under(path, it->first)) return &it->second;
  return nullptr;
}

SourceLocation Source::locate(const std::string& path, const YAML::Mark& mark) const {
  if (const std::string* flag = override_for(path)) return {*flag, 0, 0};
  if (!mark.is_null()) return {file_, mark.line + 1, mark.column + 1};
  // A map that an override created on its way to a deeper key.
  for (const auto& [p, flag] : overrides_)
    if (under(p, path)) return {flag, 0, 0};
  return {file_, 0, 0};
}

void Source::record(const std::string& path, const YAML::Mark& mark) {
  if (locations_ != nullptr) (*locations_)[path] = locate(path, mark);
}

std::string Value::text() const {
  if (!node_.IsDefined() || node_.IsNull()) fail("a value is required here");
  if (!node_.IsScalar())
    fail(std::string("expected a single value, found a ") + (node_.IsMap() ? "map" : "list"));
  return node_.Scalar();
}

long Value::integer(long min, long max) const {
  const std::string t = text();
  std::string allowed = "integers >= " + std::to_string(min);
  if (max < LONG_MAX)
    allowed = "integers from " + std::to_string(min) + " to " + std::to_string(max);
  // parse_number rejects signs; a negative integer is a range error, not a syntax error.
  const bool negative = t.size() > 1 && t.front() == '-';
  double v = 0.0;
  try {
    v = parse_number(negative ? t.substr(1) : t);
  } catch (const UnitError&) {
    fail("'" + t + "' is not an integer; allowed: " + allowed);
  }
  if (negative) v = -v;
  if (v != std::floor(v)) fail("'" + t + "' is not an integer; allowed: " + allowed);
  if (v < static_cast<double>(min) || v > static_cast<double>(max))
    fail("'" + t + "' is out of range; allowed: " + allowed);
  return static_cast<long>(v);
}

int Value::count(int min, int max) const {
  return static_cast<int>(integer(min, max));
}

double Value::number(double min, double max) const {
  const std::string t = text();
  double v = 0.0;
  try {
    v = parse_number(t);
  } catch (const UnitError& e) {
    fail(e.what());
  }
  if (v < min || v > max) {
    std::string allowed = "numbers >= " + std::to_string(min);
    if (max < 1e300) allowed += " and <= " + std::to_string(max);
    fail("'" + t + "' is out of range; allowed: " + allowed);
  }
  return v;
}

bool Value::boolean() const {
  return choice<bool>({{"true", true}, {"false", false}});
}

double Value::size() const {
  try {
    return parse_size(text());
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

engine::Bandwidth Value::bandwidth() const {
  try {
    return parse_bandwidth(text());
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

engine::Time Value::time() const {
  try {
    return parse_time(text());
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

MapReader Value::map() const {
  return MapReader(*source_, node_, path_);
}

std::vector<Value> Value::sequence() const {
  if (!node_.IsSequence()) fail("expected a list ([a, b] or one '- item' per line)");
  std::vector<Value> items;
  for (std::size_t i = 0; i < node_.size(); ++i)
    items.emplace_back(*source_, node_[i], path_ + "[" + std::to_string(i) + "]");
  return items;
}

void Value::fail(const std::string& message) const {
  throw_error(location(), path_, message);
}

void Value::fail_choice(const std::string& got, const std::vector<std::string>& allowed,
                        std::string_view what) const {
  std::string message = "unknown " + std::string(what) + " '" + got + "'";
  const std::string hint = nearest(got, allowed);
  if (!hint.empty()) message += " (did you mean '" + hint + "'?)";
  fail(message + "; allowed: " + join(allowed, " | "));
}

MapReader::MapReader(Source& source, YAML::Node node, std::string path)
    : source_(&source), node_(std::move(node)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    const std::string found = !node_.IsDefined() || node_.IsNull() ? "nothing"
                              : node_.IsSequence()                 ? "a list"
                                                                   : "'" + node_.Scalar() + "'";
    fail("expected a map of keys ({key: value} or one 'key: value' per line), found " + found);
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key = it->first;  // a copy: the iterator yields a temporary pair
    if (!key.IsScalar())
      throw_error(source_->locate(path_, key.Mark()), path_, "keys must be plain names");
    const std::string name = key.Scalar();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].first != name) continue;
      const int first_line = key_marks_[i].is_null() ? 0 : key_marks_[i].line + 1;
      throw_error(source_->locate(child_path(name), key.Mark()), child_path(name),
                  "key given twice (first on line " + std::to_string(first_line) + ")");
    }
    const YAML::Node value = it->second;
    entries_.emplace_back(name, value);
    key_marks_.push_back(key.Mark());
  }
}

std::string MapReader::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool MapReader::has(std::string_view key) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const auto& e) { return e.first == key; });
}

std::optional<Value> MapReader::get(std::string_view key) {
  if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end())
    allowed_.emplace_back(key);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first != key) continue;
    const std::string path = child_path(key);
    source_->record(path, key_marks_[i].is_null() ? entries_[i].second.Mark() : key_marks_[i]);
    return Value(*source_, entries_[i].second, path);
  }
  return std::nullopt;
}

Value MapReader::require(std::string_view key, std::string_view what) {
  if (auto v = get(key)) return *v;
  // A misspelt key ("global_bach") explains the missing one better than "missing" does.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].first;
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end() &&
        !nearest(name, {std::string(key)}).empty())
      unknown_key(i);
  }
  throw_error(source_->locate(path_, node_.Mark()), child_path(key),
              "required key missing; give " + std::string(what));
}

void MapReader::finish() const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].first;
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) unknown_key(i);
  }
}

void MapReader::unknown_key(std::size_t i) const {
  const std::string& name = entries_[i].first;
  std::string message = "unknown key";
  const std::string hint = nearest(name, allowed_);
  if (!hint.empty()) message += " (did you mean '" + hint + "'?)";
  std::vector<std::string> sorted = allowed_;
  std::sort(sorted.begin(), sorted.end());
  throw_error(source_->locate(child_path(name), key_marks_[i]), child_path(name),
              message + "; allowed: " + join(sorted));
}

void MapReader::fail(const std::string& message) const {
  throw_error(source_->locate(path_, node_.Mark()), path_, message);
}

}  // namespace clustersim::models::yaml
