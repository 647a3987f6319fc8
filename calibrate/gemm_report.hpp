// `clustersim calibrate gemm-report PROFILE --gpu PRESET` (docs/calibration.md "Measured against
// modelled GEMMs"): each GEMM a profile measured beside what the kernel model
// (models/kernels/gemm_model.hpp) predicts for that shape on a GPU preset, isolated (sustained
// share 1, as the calibration timed them): the cost of an op of that one GEMM, so the launch floor
// and the host's launch interval bound the smallest, as they bound back-to-back calls. This is how
// the tile/wave model is checked against a real GPU, and how a user sees where their profile will
// change a prediction.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "models/hardware.hpp"

namespace clustersim::calibrate {

struct GemmComparison {
  GemmMeasurement measured;
  double measured_efficiency = 0;  // achieved / datasheet peak of the dtype
  double modelled_efficiency = 0;  // the model's, same definition
  double modelled_seconds = 0;
  // (modelled − measured) / measured time: negative when the model is optimistic.
  double error() const { return modelled_seconds / measured.seconds - 1.0; }
};

struct DtypeSummary {
  std::string dtype;
  std::size_t shapes = 0;
  double median_abs_error = 0;
  double worst_error = 0;  // signed, the largest |error|
};

struct GemmReport {
  std::string gpu;                          // the preset compared against
  std::vector<GemmComparison> rows;         // in the profile's order
  std::vector<DtypeSummary> summaries;      // per dtype, fp32 .. fp8
  std::vector<std::string> not_comparable;  // "fp8: the preset has no fp8 peak", ...
};

// Throws std::invalid_argument for a measurement with no time or dimension; a dtype the preset
// has no peak for is listed in not_comparable, not an error.
GemmReport compare_gemms(const Measurements& m, const models::GpuSpec& gpu);
void print_gemm_report(std::ostream& out, const GemmReport& report);

}  // namespace clustersim::calibrate
