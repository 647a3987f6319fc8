// One name table per enum: the spelling a user writes in a scenario, the one CLI11 checks flags
// against, and the one summaries, JSON and traces print are the same entries.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim::engine {

template <typename E, std::size_t N>
class NameTable {
 public:
  constexpr explicit NameTable(std::array<std::pair<E, std::string_view>, N> entries)
      : entries_(entries) {}

  constexpr std::string_view name(E value) const {
    for (const auto& [v, n] : entries_)
      if (v == value) return n;
    return "?";
  }
  constexpr std::optional<E> parse(std::string_view name) const {
    for (const auto& [v, n] : entries_)
      if (n == name) return v;
    return std::nullopt;
  }
  // Every name in table order (for CLI11's IsMember and "allowed: …" messages).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [v, n] : entries_)
      out.emplace_back(n);
    return out;
  }
  std::string allowed(std::string_view separator = " | ") const {
    std::string out;
    for (const auto& [v, n] : entries_)
      out += (out.empty() ? "" : std::string(separator)) + std::string(n);
    return out;
  }
  constexpr const auto& entries() const { return entries_; }

 private:
  std::array<std::pair<E, std::string_view>, N> entries_;
};

template <typename E, std::size_t N>
NameTable(std::array<std::pair<E, std::string_view>, N>) -> NameTable<E, N>;

}  // namespace clustersim::engine
