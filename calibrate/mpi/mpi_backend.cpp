// The MPI backend (DESIGN.md "calibrate/"): host memcpy, Eigen GEMM and MPI collectives over a size
// sweep, each result checked, printed like nccl-tests. Run under mpirun, one process per rank.
#include "calibrate/mpi/mpi_backend.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "calibrate/cpu_bench.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/mpi/mpi_session.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::calibrate {

namespace {

struct Collective {
  const char* name;  // engine's name
  // Runs once over `count` floats per rank's buffer as nccl-tests sizes it; returns the number of
  // wrong elements on this rank.
  std::int64_t (*run)(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                      bool check);
};

// Values are small integers, exact in float, so a check compares with ==.
std::int64_t all_reduce(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                        bool check) {
  if (check) std::fill(in.begin(), in.begin() + count, static_cast<float>(rank + 1));
  MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (!check) return 0;
  const float want = static_cast<float>(n * (n + 1) / 2);
  return std::count_if(out.begin(), out.begin() + count, [&](float v) { return v != want; });
}

std::int64_t all_gather(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                        bool check) {
  const int chunk = count / n;
  if (check) std::fill(in.begin(), in.begin() + chunk, static_cast<float>(rank));
  MPI_Allgather(in.data(), chunk, MPI_FLOAT, out.data(), chunk, MPI_FLOAT, MPI_COMM_WORLD);
  if (!check) return 0;
  std::int64_t wrong = 0;
  for (int i = 0; i < chunk * n; ++i)
    wrong += out[static_cast<std::size_t>(i)] != static_cast<float>(i / chunk);
  return wrong;
}

std::int64_t reduce_scatter(std::vector<float>& in, std::vector<float>& out, int count, int rank,
                            int n, bool check) {
  const int chunk = count / n;
  if (check)
    for (int i = 0; i < chunk * n; ++i)
      in[static_cast<std::size_t>(i)] = static_cast<float>(rank + i / chunk);
  MPI_Reduce_scatter_block(in.data(), out.data(), chunk, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (!check) return 0;
  // Chunk `rank` summed over ranks r: Σ (r + rank) = n(n−1)/2 + n·rank.
  const float want = static_cast<float>(n * (n - 1) / 2 + n * rank);
  return std::count_if(out.begin(), out.begin() + chunk, [&](float v) { return v != want; });
}

std::int64_t all_to_all(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                        bool check) {
  const int chunk = count / n;
  if (check)
    for (int i = 0; i < chunk * n; ++i)
      in[static_cast<std::size_t>(i)] = static_cast<float>(rank * 1000 + i / chunk);
  MPI_Alltoall(in.data(), chunk, MPI_FLOAT, out.data(), chunk, MPI_FLOAT, MPI_COMM_WORLD);
  if (!check) return 0;
  std::int64_t wrong = 0;  // chunk j came from rank j, which sent it its chunk number `rank`
  for (int i = 0; i < chunk * n; ++i)
    wrong += out[static_cast<std::size_t>(i)] != static_cast<float>((i / chunk) * 1000 + rank);
  return wrong;
}

std::int64_t broadcast(std::vector<float>& in, std::vector<float>&, int count, int rank, int,
                       bool check) {
  if (check) std::fill(in.begin(), in.begin() + count, rank == 0 ? 42.0f : -1.0f);
  MPI_Bcast(in.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (!check) return 0;
  return std::count_if(in.begin(), in.begin() + count, [](float v) { return v != 42.0f; });
}

std::int64_t reduce(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                    bool check) {
  if (check) std::fill(in.begin(), in.begin() + count, static_cast<float>(rank + 1));
  MPI_Reduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (!check || rank != 0) return 0;
  const float want = static_cast<float>(n * (n + 1) / 2);
  return std::count_if(out.begin(), out.begin() + count, [&](float v) { return v != want; });
}

std::int64_t send_recv(std::vector<float>& in, std::vector<float>& out, int count, int rank, int n,
                       bool check) {
  if (check) std::fill(in.begin(), in.begin() + count, static_cast<float>(rank));
  const int to = (rank + 1) % n, from = (rank + n - 1) % n;
  MPI_Sendrecv(in.data(), count, MPI_FLOAT, to, 7, out.data(), count, MPI_FLOAT, from, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!check) return 0;
  return std::count_if(out.begin(), out.begin() + count,
                       [&](float v) { return v != static_cast<float>(from); });
}

constexpr Collective kCollectives[] = {
    {"all_reduce", all_reduce}, {"all_gather", all_gather}, {"reduce_scatter", reduce_scatter},
    {"all_to_all", all_to_all}, {"broadcast", broadcast},   {"reduce", reduce},
    {"send_recv", send_recv}};

std::vector<double> collective_sizes(bool quick) {
  std::vector<double> out;
  for (double s = 8; s <= (quick ? 256.0 * 1024 : 256.0 * (1 << 20)); s *= quick ? 4 : 2)
    out.push_back(s);
  return out;
}

std::string mpi_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string v(buf, static_cast<std::size_t>(std::max(0, len)));
  if (const auto nl = v.find_first_of(",\n"); nl != std::string::npos) v.resize(nl);
  return v;
}

// Distinct processor names across ranks: how many nodes took part.
std::uint32_t count_nodes(int n) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(n) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  std::set<std::string> hosts;
  for (int r = 0; r < n; ++r)
    hosts.insert(std::string(all.data() + static_cast<std::ptrdiff_t>(r) * MPI_MAX_PROCESSOR_NAME));
  return static_cast<std::uint32_t>(hosts.size());
}

}  // namespace

BenchResult run_mpi_benchmarks(const BenchOptions& options) {
  MpiSession mpi;
  const int n = mpi.size(), rank = mpi.rank();
  if (n < 2)
    throw BackendUnavailable(
        "the MPI backend needs at least 2 ranks to measure collectives; run it under "
        "mpirun -np N (N >= 2)");
  BenchResult result;
  result.writer = rank == 0;
  Provenance& p = result.provenance;
  p.backend = "mpi";
  p.gpu = "cpu";
  p.host = host_name();
  p.date = utc_now_iso8601();
  p.mpi_version = mpi_version();
  p.ranks = static_cast<std::uint32_t>(n);
  p.nodes = count_nodes(n);

  const auto copies = copy_sizes(options.quick);
  const auto gemms = gemm_sizes(options.quick);
  const auto sizes = collective_sizes(options.quick);
  const std::size_t total = copies.size() + gemms.size() + std::size(kCollectives) * sizes.size();
  std::size_t done = 0;
  // Every rank takes part in the decision to stop, so no rank is left waiting in a collective.
  const auto step = [&](std::string_view phase) {
    ++done;
    if (result.writer && options.progress) options.progress(phase, done, total);
    int stop = options.cancelled && options.cancelled() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (stop) throw Cancelled();
  };

  // Host copies and GEMMs: rank 0 measures while the others wait, so they do not compete.
  for (double s : copies) {
    if (rank == 0) result.measurements.copies.push_back(measure_host_copy(s));
    step("memcpy");
  }
  for (auto g : gemms) {
    if (rank == 0) result.measurements.gemms.push_back(measure_eigen_gemm(g));
    step("gemm");
  }

  const int iters = options.quick ? 5 : 20;
  const std::size_t max_count = static_cast<std::size_t>(sizes.back() / sizeof(float));
  std::vector<float> in(max_count), out(max_count);
  for (const auto& c : kCollectives) {
    if (options.table && result.writer) print_collective_header(*options.table, c.name, p.ranks);
    for (double s : sizes) {
      // Counts divisible by n, as nccl-tests rounds them.
      int count = static_cast<int>(s / sizeof(float));
      count -= count % n;
      if (count == 0) {
        step(c.name);
        continue;
      }
      std::int64_t wrong = c.run(in, out, count, rank, n, true);
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i)
        c.run(in, out, count, rank, n, false);
      double t = (MPI_Wtime() - t0) / iters;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);  // slowest rank
      CollectiveMeasurement m;
      m.collective = c.name;
      m.ranks = p.ranks;
      m.nodes = p.nodes;
      m.bytes = static_cast<double>(count) * sizeof(float);
      m.count = static_cast<std::uint64_t>(count);
      m.dtype = "float";
      m.seconds = std::max(t, 1e-9);
      m.algbw = m.bytes / m.seconds;
      m.busbw =
          m.algbw * engine::bus_bandwidth_factor(*engine::parse_collective_type(c.name), p.ranks);
      m.wrong = wrong;
      if (options.table && result.writer) print_collective_row(*options.table, m);
      result.measurements.collectives.push_back(m);
      step(c.name);
    }
  }
  return result;
}

}  // namespace clustersim::calibrate
