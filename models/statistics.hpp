// Small summary statistics the reports share (validate, calibrate gemm-report).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace clustersim::models {

// The middle value, or the mean of the two middle values of an even count. Throws
// std::invalid_argument for no values (a median of nothing cannot be printed).
inline double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace clustersim::models
