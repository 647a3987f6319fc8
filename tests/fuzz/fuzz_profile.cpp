// libFuzzer target: a calibration profile's JSON → the simulator's reader
// (models::calibration_profile_from_json) and calibrate's, which adds the raw measurements
// (calibrate::profile_from_json). Text that is not JSON stops at the JSON parser, as
// engine::read_json_file would refuse it. Bad input must be an engine::ProfileError; any other
// exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "calibrate/profile.hpp"
#include "engine/calibration/json_fields.hpp"
#include "models/calibration_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr,
                                                   /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  try {
    clustersim::models::calibration_profile_from_json(doc, "fuzz.json");
  } catch (const clustersim::engine::ProfileError&) {
  }
  try {
    clustersim::calibrate::profile_from_json(doc, "fuzz.json");
  } catch (const clustersim::engine::ProfileError&) {
  }
  return 0;
}
