// The GEMM shapes a scenario launches, for `clustersim calibrate --shapes-from`
// (docs/calibration.md "GEMM shapes of a scenario"): the calibration then measures the shapes the
// prediction will cost instead of interpolating between squares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

struct ScenarioGemm {
  std::string dtype;  // "bf16", "fp16", "tf32", "fp32", "fp8"
  std::uint64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  // How often one iteration launches it over all simulated ranks, and those launches' FLOPs
  // (2·m·n·k·batch each): what ranks the shapes when they are too many to measure.
  std::uint64_t launches = 0;
  double total_flops = 0;
};

// Distinct GEMMs of the scenario's compute ops (one data-parallel replica: the others launch the
// same), by total FLOPs, largest first, at most `limit` of them (0: all). Throws ScenarioError
// for what loading throws for.
std::vector<ScenarioGemm> scenario_gemm_shapes(const Scenario& scenario, std::size_t limit = 0);

}  // namespace clustersim::models
