// libFuzzer target: scenario text → load, validate and the schedule-size estimate
// (models::parse_scenario), as `clustersim run` does before building anything. Leading lines
// "#set KEY=VALUE" (YAML comments, so the text stays a scenario) become --set overrides, so the
// fuzzer reaches the override parser too. Bad input must be a ScenarioError; any other exception
// escapes and libFuzzer reports it as a crash (docs/reliability.md "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace {

std::vector<std::string> leading_overrides(const std::string& text) {
  constexpr std::string_view kPrefix = "#set ";
  std::vector<std::string> overrides;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) && line.starts_with(kPrefix))
    overrides.push_back(line.substr(kPrefix.size()));
  return overrides;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    clustersim::models::parse_scenario(text, "fuzz.yaml", leading_overrides(text));
  } catch (const clustersim::models::ScenarioError&) {
    // Bad input, reported with its key: what the loader promises.
  }
  return 0;
}
