// `clustersim calibrate from-execution MEASURED.json --out PROFILE` (docs/execution.md "Feeding
// back"): a calibration profile fitted to what an execution measured, so the next prediction of
// the same cluster uses it. Compute ops become GEMM throughput points (their FLOPs over their
// median measured time per size), collectives become nccl-tests-like rows (their bytes over the
// median time from the last member's arrival to the end, per collective, group shape and size),
// and the usual fit (calibrate/fit.hpp) turns them into a profile.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/profile.hpp"

namespace clustersim::calibrate {

// `file` names MEASURED in errors. Throws ImportError (calibrate/nccl_tests_import.hpp) naming
// the file and key when MEASURED is not the JSON of `clustersim execute` or measured nothing to
// fit.
Profile profile_from_execution(const nlohmann::json& measured, const std::string& file);

}  // namespace clustersim::calibrate
