// The calibration profile file (DESIGN.md "Calibration profile", docs/calibration.md): provenance,
// raw measurements and the fitted model. The fitted parts' types and readers belong to their
// consumers (engine/calibration, models/compute_profile); this file puts the whole together.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "calibrate/measurements.hpp"
#include "engine/calibration/collective_profile.hpp"
#include "models/compute_profile.hpp"

namespace clustersim::calibrate {

inline constexpr const char* kProfileFormat = "clustersim-calibration";
inline constexpr int kProfileVersion = 1;

struct Profile {
  Provenance provenance;
  Measurements measurements;
  engine::CollectiveProfile collectives;
  models::ComputeProfile compute;
};

nlohmann::json to_json(const Profile& profile);
// `file` labels errors. Throws engine::ProfileError naming the file and key.
Profile profile_from_json(const nlohmann::json& doc, const std::string& file);
Profile read_profile(const std::string& path);

// Writes `path` atomically: a temporary file next to it, flushed, then renamed over it, so a
// reader never sees half a profile and a failure leaves no file behind.
void write_profile(const Profile& profile, const std::string& path);
void write_text_atomically(const std::string& text, const std::string& path);

// "2024-05-01T12:00:00Z" for now, and this machine's host name.
std::string utc_now_iso8601();
std::string host_name();

}  // namespace clustersim::calibrate
