// clustersim-sweep-mpi: `clustersim sweep` under `mpirun -np N` (docs/sweeps.md "Under MPI").
// `clustersim` links no MPI library, so it execs this on every rank. Rank 0 validates, hands out
// points one at a time to whichever rank asks (dynamic load balancing: a slow point holds up one
// rank, not a static share), prints the progress and writes the files exactly as a local sweep
// would; ranks 1..N-1 run points. With one rank it is a local sweep.
#include <mpi.h>

#include <cstdint>
#include <iostream>

#include "cli/sweep_command.hpp"
#include "engine/io/atomic_file.hpp"
#include "models/scenario.hpp"

namespace {

using namespace clustersim;

constexpr int kTagRow = 1;    // worker -> 0: a finished row as JSON (empty: first request)
constexpr int kTagPoint = 2;  // 0 -> worker: the index of the next point, or -1: stop

std::string receive_text(int& source) {
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, kTagRow, MPI_COMM_WORLD, &status);
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string text(static_cast<std::size_t>(length), '\0');
  MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, kTagRow, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  source = status.MPI_SOURCE;
  return text;
}

// Rank 0: answers each request with the next point until none is left, then stops every worker.
void coordinate(int ranks, const std::vector<models::SweepPoint>& todo,
                const std::function<void(models::SweepRow)>& done) {
  std::size_t next = 0;
  int stopped = 0;
  while (stopped < ranks - 1) {
    int source = 0;
    const std::string text = receive_text(source);
    if (!text.empty()) done(models::row_from_json(nlohmann::ordered_json::parse(text)));
    // The point's index in the full product, which every worker rebuilds from the same arguments.
    const std::int64_t index =
        next < todo.size() ? static_cast<std::int64_t>(todo[next++].index) : -1;
    if (index < 0) ++stopped;
    MPI_Send(&index, 1, MPI_INT64_T, source, kTagPoint, MPI_COMM_WORLD);
  }
}

// Ranks 1..N-1: ask, run, send back, until told to stop.
void work(const cli::SweepArgs& args) {
  const models::SweepRequest request = cli::sweep_request(args);
  const std::vector<models::SweepPoint> points = models::sweep_points(request.axes);
  std::string reply;
  while (true) {
    MPI_Send(reply.data(), static_cast<int>(reply.size()), MPI_CHAR, 0, kTagRow, MPI_COMM_WORLD);
    std::int64_t index = -1;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagPoint, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index < 0) return;
    models::SweepPoint point = points[static_cast<std::size_t>(index)];
    // Rank 0 validated it; this marks a simgrid point to run in a child process of its own.
    models::validate_sweep_point(request, point);
    reply = models::row_to_json(models::run_sweep_point(request, point)).dump();
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CLI::App app{"clustersim-sweep-mpi: `clustersim sweep` under mpirun (usually started by it)"};
  cli::SweepArgs args;
  cli::add_sweep_options(app, args);
  int rc = cli::kExitOk;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    rc = rank == 0 ? app.exit(e) : 1;
    MPI_Finalize();
    return rc == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  if (rank == 0) engine::install_interrupt_cleanup();
  try {
    if (rank != 0) {
      work(args);
    } else {
      const models::PointExecutor executor =
          ranks == 1
              ? models::PointExecutor{}
              : [ranks](const models::SweepRequest&, const std::vector<models::SweepPoint>& todo,
                        const std::function<void(models::SweepRow)>& done) {
                  coordinate(ranks, todo, done);
                };
      rc = cli::run_sweep_command(args, executor);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    const bool bad_input = dynamic_cast<const models::ScenarioError*>(&e) != nullptr ||
                           dynamic_cast<const models::OutputPathError*>(&e) != nullptr ||
                           dynamic_cast<const cli::BadInput*>(&e) != nullptr;
    rc = bad_input ? cli::kExitBadInput : cli::kExitFailure;
  }
  // Rank 0 failing before it handed out the points leaves workers waiting: end them all.
  if (rc != cli::kExitOk) MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Finalize();
  return rc;
}
