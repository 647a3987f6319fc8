// Shared pieces of the `clustersim` subcommands: exit codes (DESIGN.md "Commands") and the way a
// subcommand registers itself.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>

namespace clustersim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // anything else
inline constexpr int kExitBadInput = 2;  // bad scenario, flags or files

// Thrown for bad input that is not a scenario error (a missing log file, a bad flag value).
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A subcommand stores what to do once parsing succeeded; main() runs it and maps exceptions to
// exit codes (ScenarioError, BadInput -> 2; anything else -> 1).
using Action = std::function<int()>;

}  // namespace clustersim::cli
