// Chakra execution traces in (docs/interop.md "Import"): one PREFIX.<rank>.et per rank and
// ASTRA-sim's comm-group JSON become a schedule that the engine simulates on the scenario's
// cluster and network. Compute nodes keep their recorded durations; communication is simulated.
// Depends on the engine only, so that models/ can run an imported workload.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/compute_model.hpp"
#include "engine/schedule.hpp"
#include "engine/units.hpp"

namespace clustersim::models::chakra {

// A trace or comm-group file that cannot be read as one: the message names the file and, where
// one is at fault, the node (its id and name) and the attribute.
class ChakraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ImportedWorkload {
  engine::Schedule schedule;
  // Each compute op names the kernel list of its recorded duration; this is that duration, by
  // list index (RecordedComputeModel).
  std::vector<engine::Time> list_durations;
  // How the traces were read: node counts, defaults taken, attributes not read (never dropped
  // silently).
  std::vector<std::string> notes;
};

// PREFIX.0.et ... PREFIX.<world_size - 1>.et, and `comm_groups` ("" for none: a collective
// without pg_name then spans every rank). `progress` gets the share of ranks read.
ImportedWorkload import_chakra(const std::string& prefix, const std::string& comm_groups,
                               std::uint32_t world_size,
                               const std::function<void(double)>& progress = {});

// The compute model of an imported workload: every compute op lasts what its trace recorded.
class RecordedComputeModel final : public engine::ComputeModel {
 public:
  explicit RecordedComputeModel(std::vector<engine::Time> list_durations)
      : durations_(std::move(list_durations)) {}
  engine::Time duration(const engine::Op&, double) const override { return engine::Time::zero(); }
  std::vector<engine::Time> kernel_list_durations(const engine::KernelTable&) const override {
    return durations_;
  }

 private:
  std::vector<engine::Time> durations_;
};

}  // namespace clustersim::models::chakra
