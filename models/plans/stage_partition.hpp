// Which layers each pipeline stage (and each virtual stage, or model chunk) runs. Contiguous
// ranges: the embedding joins the first chunk, the LM head the last. Transformers split their
// blocks evenly (Megatron); layer lists are balanced by time; `parallel.stage_layers` overrides.
#pragma once

#include <vector>

#include "models/model_costs.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// Layer indices (into `layers`) of each global chunk g = chunk × pp + stage, g = 0 .. pp·v − 1.
// Under dualpipe the pp stages come first, then chunk pp + s repeats stage pp − 1 − s (rank s's
// reverse-direction copy), 2·pp chunks in all.
// `parallel.stage_layers`, when given, holds the blocks (or list layers) of each chunk. The
// scenario's validation has checked that the split is possible.
std::vector<std::vector<int>> partition_layers(const ParallelConfig& parallel,
                                               const std::vector<LayerCost>& layers);

}  // namespace clustersim::models
