// The calibration profile as the simulator reads it (DESIGN.md "Calibration profile",
// docs/calibration.md "Profile format"): the one reader of a profile file's identity (format,
// version), its provenance and its fitted parts, the collective fits engine's network models
// consume and the GEMM throughput the compute model consumes. calibrate/ writes profiles and adds
// the raw measurements on top of this reader; it never reads the fitted parts itself.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "engine/calibration/collective_profile.hpp"
#include "models/compute_profile.hpp"

namespace clustersim::models {

inline constexpr const char* kProfileFormat = "clustersim-calibration";
inline constexpr int kProfileVersion = 1;

// One GPU as the CUDA backend found it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;     // "0000:07:00.0"
  double memory_total = 0.0;  // bytes
  double memory_free = 0.0;   // bytes, when the inventory was taken
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
};

// One GPU pair of `nvidia-smi topo -m` (or NVML): how a and b connect ("NV12", "PIX", "SYS", ...).
struct DeviceLink {
  std::string a, b, link;
};

// Who measured, where and with what.
struct Provenance {
  std::string host;
  std::string gpu;              // device name, "cpu" for the MPI backend
  std::string driver_version;   // CUDA driver, empty when none
  std::string runtime_version;  // CUDA runtime, empty when none
  std::string nccl_version;
  std::string mpi_version;
  std::string date;     // ISO 8601 UTC
  std::string backend;  // "cuda", "mpi" or "nccl-tests"
  std::uint32_t ranks = 1;
  std::uint32_t nodes = 1;
  std::vector<std::string> sources;  // imported files
  std::vector<DeviceInfo> devices;   // CUDA backend: the inventory
  std::string fabric;                // from nvidia-smi topo -m: "nvswitch" | "pcie"; empty: unknown
  std::vector<DeviceLink> gpu_links;
};

// Everything of a profile file but its raw measurements.
struct CalibrationProfile {
  Provenance provenance;
  engine::CollectiveProfile collectives;  // "fitted"."collectives"
  ComputeProfile compute;                 // "fitted"."compute"
};

// Reads the file at `path` once. Every error is an engine::ProfileError naming the file and the
// JSON path of the bad key ("p.json: fitted.collectives[0].ranges[1].busbw: expected a positive
// number"); a missing file or invalid JSON too.
CalibrationProfile read_calibration_profile(const std::string& path);
// The same from a parsed document; `file` only labels errors.
CalibrationProfile calibration_profile_from_json(const nlohmann::json& doc,
                                                 const std::string& file);
// "format", "version", "provenance" and "fitted" of a profile document (no "measurements").
nlohmann::json to_json(const CalibrationProfile& profile);

}  // namespace clustersim::models
