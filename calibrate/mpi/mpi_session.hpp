// Internal to calibrate/mpi: MPI for the length of one calibration or execution. Initialises MPI
// unless the program already did (a test harness, an embedding) and finalises only what it
// initialised, so two back ends in one process do not finalise each other's MPI.
#pragma once

#include <mpi.h>

namespace clustersim::calibrate {

class MpiSession {
 public:
  MpiSession() {
    int done = 0;
    MPI_Initialized(&done);
    if (!done) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
      owned_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    if (owned_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool owned_ = false;
  int rank_ = 0, size_ = 1;
};

}  // namespace clustersim::calibrate
