// Import of nccl-tests text output (all_reduce_perf, all_gather_perf, ...) into profile
// measurements (DESIGN.md "Calibration profile": "nccl-tests text output imports into the same
// format"). The table is read by its header's column names, so logs with or without the in-place
// half, with leading per-line prefixes (mpirun --tag-output, timestamps) or extra trailing columns
// import alike; docs/calibration.md lists the layouts covered.
#pragma once

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/nccl_tests_shape.hpp"
#include "calibrate/profile.hpp"

namespace clustersim::calibrate {

// Bad or foreign input: the message starts with "<file>:<line>: ".
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the user states about logs that do not say it themselves.
struct NcclTestsOptions {
  std::string collective;  // engine name, or empty
  StatedShape shape;       // --ranks, --nodes
};

// One test in a log (a log may hold several): its own measurement set.
struct NcclTestsRun {
  std::string collective;
  ResolvedShape shape;
  std::size_t first_row = 0, row_count = 0;  // into NcclTestsLog::rows
  std::size_t first_line = 0;                // of its first result row
};

struct NcclTestsLog {
  std::vector<CollectiveMeasurement> rows;  // ranks and nodes as each test's shape resolved
  std::vector<NcclTestsRun> tests;
  // Lines that are not nccl-tests output (job prints, MPI banners, library warnings) are skipped:
  // NCCL_DEBUG lines apart, the others counted with the first quoted.
  std::size_t skipped_debug_lines = 0;
  std::size_t skipped_other_lines = 0;
  std::size_t first_skipped_line = 0;
  std::string first_skipped;
  std::string gpu;                 // device name of rank 0
  std::vector<std::string> hosts;  // distinct, in order of appearance
  std::string nccl_version;        // "2.21.5" when the log says, else empty
  std::string tests_version;       // nccl-tests' own version, else empty
};

// `name` labels errors and infers the collective from a file named after the binary when the log
// has no "# Collective test starting:" line (older nccl-tests). `collective` (an engine name such
// as "all_reduce", or empty) says which one it is instead of the file name; a log whose own line
// names another collective is an ImportError.
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& name,
                                  const std::string& collective = "");
NcclTestsLog read_nccl_tests_log(const std::string& path, const std::string& collective = "");
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& name,
                                  const NcclTestsOptions& options);
NcclTestsLog read_nccl_tests_log(const std::string& path, const NcclTestsOptions& options);

// Reads every log, fits, and returns a profile with backend "nccl-tests".
Profile import_nccl_tests(const std::vector<std::string>& paths,
                          const std::string& collective = "");
// The same, appending to `summary` one line per test (collective, shape and whence) and per log
// with skipped lines (how many, the first quoted).
Profile import_nccl_tests(const std::vector<std::string>& paths, const NcclTestsOptions& options,
                          std::vector<std::string>* summary);

}  // namespace clustersim::calibrate
