// Internal to the scenario loader: one reader per section of the file (scenario_cluster.cpp,
// scenario_model.cpp, scenario_sections.cpp), the --set overrides (scenario_overrides.cpp) and
// the plan checks (scenario_validate.cpp). Only scenario.cpp and those files include this.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "models/limits.hpp"
#include "models/scenario.hpp"
#include "models/yaml_reader.hpp"

namespace clustersim::models::detail {

// A count as the validation messages print it.
inline std::string str(std::int64_t v) {
  return std::to_string(v);
}

// Applies one "path.to.key=value" override (the value parsed as YAML) to `root` (a map), creating
// intermediate maps, and tells `source` so errors in that value cite the flag.
void apply_override(YAML::Node& root, const std::string& flag, yaml::Source& source);

// An existing file named by `value`: relative paths are taken from `base_dir` (the scenario's
// folder), or from the current directory when the value came from a --set override.
std::string existing_file(const yaml::Value& value, const std::filesystem::path& base_dir);

// `base_dir` resolves `node: {from_topo: FILE}`.
ClusterConfig read_cluster(const yaml::Value& value, const std::filesystem::path& base_dir);
ModelSpec read_model(const yaml::Value& value, const std::filesystem::path& base_dir);
// workload: {chakra: PREFIX, comm_groups: FILE}; paths relative to `base_dir`, the first trace
// (PREFIX.0.et) must exist.
WorkloadConfig read_workload(const yaml::Value& value, const std::filesystem::path& base_dir);
// `model` decides whether seq_len is required (transformers without a default_seq_len).
TrainingConfig read_training(const yaml::Value& value, const ModelSpec& model);
// dp is returned as written (0 when absent); validate() derives and checks it.
ParallelConfig read_parallel(const yaml::Value& value);
SimulationConfig read_simulation(const std::optional<yaml::Value>& value,
                                 const std::filesystem::path& base_dir);

// A validation case's `published:` list (models/published.hpp).
std::vector<PublishedFigure> read_published(const yaml::Value& value);

// The plan's arithmetic (world size, dp, batches, layers per stage, heads per TP rank, ...).
// Sets scenario.parallel.dp. Errors go through Scenario::fail, so they cite the key's line.
void validate(Scenario& scenario);
// Size limits (scenario_limits.cpp, models/limits.hpp): the world size and the products of
// counts first, before anything uses them; the micro-batches and the schedule's size once dp is
// known.
void check_counts(const Scenario& scenario);
// Whether the engine has a plan for `algorithm` running `type` (the hardware aside).
bool algorithm_exists(engine::CollectiveType type, engine::Algorithm algorithm);
void check_sizes(const Scenario& scenario);

}  // namespace clustersim::models::detail
