// Runs the MPI backend in quick mode under mpirun and checks the profile rank 0 wrote
// (ctest calibrate_mpi_loopback). Exit 0 when every check holds.
#include <cstdio>
#include <iostream>

#include "calibrate/fit.hpp"
#include "calibrate/mpi/mpi_backend.hpp"

using namespace clustersim::calibrate;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: mpirun -np N clustersim_calibrate_mpi_check PROFILE\n";
    return 2;
  }
  int failures = 0;
  const auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::cerr << "FAILED: " << what << "\n";
      ++failures;
    }
  };
  try {
    BenchOptions options;
    options.quick = true;
    options.table = &std::cout;
    const Calibration c = calibrate(run_mpi_benchmarks, options);
    if (!c.writer) return 0;
    write_profile(c.profile, argv[1]);
    const Profile p = read_profile(argv[1]);
    const std::uint32_t n = p.provenance.ranks;
    expect(p.provenance.backend == "mpi", "backend is mpi");
    expect(n >= 2, "at least two ranks recorded");
    expect(!p.measurements.copies.empty() && !p.measurements.gemms.empty(), "copies and GEMMs");
    expect(p.compute.has("fp32"), "fp32 GEMM throughput fitted");
    for (const char* name : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                             "broadcast", "reduce", "send_recv"}) {
      const auto type = *clustersim::engine::parse_collective_type(name);
      const auto match = p.collectives.lookup(type, {n, p.provenance.nodes});
      expect(match.exact, std::string(name) + " fitted for the run's shape");
      std::size_t rows = 0;
      for (const auto& m : p.measurements.collectives) {
        if (m.collective != name) continue;
        ++rows;
        expect(m.wrong == 0, std::string(name) + " results correct");
        // busbw = algbw × factor, nccl-tests: all_reduce 2(n-1)/n, gathers (n-1)/n, others 1.
        const double factor =
            std::string(name) == "all_reduce" ? 2.0 * (n - 1) / n
            : (std::string(name) == "all_gather" || std::string(name) == "reduce_scatter" ||
               std::string(name) == "all_to_all")
                ? double(n - 1) / n
                : 1.0;
        expect(std::abs(m.busbw - m.algbw * factor) <= 1e-9 * m.busbw, "busbw = algbw x factor");
        expect(std::abs(m.algbw - m.bytes / m.seconds) <= 1e-9 * m.algbw, "algbw = bytes / time");
      }
      expect(rows >= 5, std::string(name) + " has a size sweep");
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (failures == 0) std::cout << "calibrate MPI check: OK\n";
  return failures == 0 ? 0 : 1;
}
