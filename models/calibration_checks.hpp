// Figures of a calibration profile that cannot be true on the cluster it calibrates (issue 10,
// docs/calibration.md "Plausibility"): a GEMM faster than the GPU's peak for its precision,
// memory-bound kernels faster than its HBM, a collective's bus bandwidth more than twice the
// fastest link (in-switch reduction, NVLS or SHARP, reaches about 1.1×). Such a profile would make
// an MFU or a utilization above 1; it is bad input instead, naming the scenario key
// (simulation.calibration), the profile file and its key.
#pragma once

#include <string>

#include "engine/calibration/collective_profile.hpp"
#include "engine/topology.hpp"
#include "models/compute_profile.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// How much faster than the fastest link a collective's bus bandwidth may be.
inline constexpr double kMaxBusBandwidthOverLink = 2.0;

// Throws ScenarioError (scenario.fail) on the first implausible figure. `profile_gpu` (the
// device it was measured on) only words the hint.
void check_profile_plausible(const Scenario& scenario, const std::string& profile_path,
                             const std::string& profile_gpu, const ComputeProfile& compute,
                             const engine::CollectiveProfile& collectives,
                             const engine::Topology& topology);

}  // namespace clustersim::models
