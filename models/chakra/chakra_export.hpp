// Chakra execution traces out (docs/interop.md): a simulated scenario's schedule as one
// PREFIX.<rank>.et per rank in Chakra's framing (varint-delimited messages: GlobalMetadata, then
// Nodes) plus the communicator-group JSON ASTRA-sim reads (PREFIX.json), so that ASTRA-sim and the
// Chakra tools can run what clustersim planned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/frontend.hpp"

namespace clustersim::models::chakra {

// PREFIX.<rank>.et for each rank, then PREFIX.json.
std::vector<std::string> chakra_output_paths(const std::string& prefix, std::uint32_t num_ranks);

// Writes every file atomically, after check_output_path on each. Durations are the simulated
// ones (compute: the compute model's), rounded to whole microseconds as Chakra keeps them.
// Throws std::runtime_error for an op Chakra cannot express (a send_recv collective).
void write_chakra_traces(const Prediction& prediction, const std::string& prefix);

}  // namespace clustersim::models::chakra
