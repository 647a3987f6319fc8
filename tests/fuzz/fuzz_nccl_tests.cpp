// libFuzzer target: an nccl-tests log → the importer's parser and the fit that
// `clustersim calibrate import-nccl-tests` runs on its rows. Bad input must be an ImportError (a
// fit with too few points, std::invalid_argument, is one after import_nccl_tests); any other
// exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "calibrate/fit.hpp"
#include "calibrate/nccl_tests_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim::calibrate;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    NcclTestsLog log = parse_nccl_tests_log(in, "all_reduce_perf.log");
    Profile profile;
    profile.measurements.collectives = std::move(log.rows);
    fit_profile(profile);
  } catch (const ImportError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
