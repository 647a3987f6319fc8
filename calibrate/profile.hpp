// The calibration profile file (DESIGN.md "Calibration profile", docs/calibration.md): what the
// simulator reads (models::CalibrationProfile: provenance and the fitted parts, read by
// models::calibration_profile_from_json) plus the raw measurements the fit came from.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "calibrate/measurements.hpp"
#include "models/calibration_profile.hpp"

namespace clustersim::calibrate {

using models::kProfileFormat;
using models::kProfileVersion;

struct Profile : models::CalibrationProfile {
  Measurements measurements;
};

nlohmann::json to_json(const Profile& profile);
// `file` labels errors. Throws engine::ProfileError naming the file and key.
Profile profile_from_json(const nlohmann::json& doc, const std::string& file);
Profile read_profile(const std::string& path);

// Writes `path` atomically (engine::write_file_atomically: a temporary file beside it, then
// renamed over it), so a reader never sees half a profile and a failure leaves no file behind.
void write_profile(const Profile& profile, const std::string& path);

// "2024-05-01T12:00:00Z" for now, and this machine's host name.
std::string utc_now_iso8601();
std::string host_name();

}  // namespace clustersim::calibrate
