// `clustersim compare PREDICTED.json MEASURED.json` (docs/execution.md "Compare"): how far a
// prediction was off. PREDICTED is a result JSON (`clustersim run --json`); MEASURED is the result
// JSON of `clustersim execute`, which carries every op's predicted and measured times. Errors are
// predicted − measured (negative: the simulator was optimistic); the category rows use the
// critical rank's time breakdown, which adds up to the iteration time, so their errors add up to
// the iteration-time error.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::calibrate {

// A file that is not what compare needs: the message names the file and the key.
class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Figure {
  std::string name;  // "iteration", "compute", "dp_comm", ..., "idle"
  double predicted_s = 0;
  double measured_s = 0;
  double error_s() const { return predicted_s - measured_s; }
  // Relative to the measurement; 0 when nothing was measured.
  double relative() const { return measured_s > 0 ? error_s() / measured_s : 0.0; }
};

struct OpError {
  std::uint64_t id = 0;
  std::uint64_t rank = 0;
  std::string label, category, kind, stream;
  double predicted_s = 0;  // duration
  double measured_s = 0;
  double error_s() const { return predicted_s - measured_s; }
};

struct Comparison {
  std::string scenario;
  Figure iteration;
  std::vector<Figure> categories;  // the breakdown_s keys, in the JSON's order
  std::vector<OpError> largest;    // largest |error| first
  std::size_t ops_compared = 0;
};

// The `top` largest |error| first (ties in the given order).
std::vector<OpError> largest_errors(std::vector<OpError> errors, std::size_t top);

// `predicted_name`, `measured_name`: the files, for messages.
Comparison compare_results(const nlohmann::ordered_json& predicted,
                           const nlohmann::ordered_json& measured,
                           const std::string& predicted_name, const std::string& measured_name,
                           std::size_t top = 10);

void print_comparison(std::ostream& out, const Comparison& c);
nlohmann::ordered_json comparison_to_json(const Comparison& c);

// A Chrome/Perfetto trace with, per rank, a "predicted" and a "measured" process side by side,
// a thread per stream, from MEASURED's "ops".
nlohmann::ordered_json merged_trace(const nlohmann::ordered_json& measured,
                                    const std::string& measured_name);

}  // namespace clustersim::calibrate
