// The result's invariants, checked before any figure leaves the program (issue 10): a figure that
// cannot be true is a bug in the simulator, not a prediction, so it is reported as one.
#pragma once

#include <stdexcept>

#include "models/metrics.hpp"

namespace clustersim::models {

// A result broke an invariant. what() reads "internal error: ... (please report ...)" and names
// the invariant and the values; the CLI exits with 1 and prints no figure.
class ResultInvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Times finite and non-negative; no category of the critical rank's breakdown, and not their
// sum, longer than the iteration; exposed communication within the iteration; MFU, bubble and
// overlap fractions in [0, 1], link utilizations too under the flow model (the one that shares
// links); throughput, bytes and memory finite and
// non-negative. Throws ResultInvariantError on the first that fails.
void check_result(const Result& result);

}  // namespace clustersim::models
