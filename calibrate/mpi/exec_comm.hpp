// Communication ops of the MPI executor (docs/execution.md "What runs"): each collective as the
// non-blocking MPI collective on its group's communicator, send/recv as MPI_Isend/MPI_Irecv, with
// buffers of real values whose expected result is known, so every result is checked (as
// nccl-tests' #wrong column).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::calibrate {

struct CommOp {
  engine::OpId id = 0;
  int member = 0;      // this rank's index in the group (collectives); the peer (send/recv)
  int group_size = 1;  // members of the group; 2 for send/recv
  int count = 0;       // floats in the buffer
  std::vector<float> in, out;
  MPI_Request request = MPI_REQUEST_NULL;
};

// Posts `op` (collective, send or recv). `comm`: the group's communicator for a collective,
// MPI_COMM_WORLD for send/recv; `member`, `size`: this rank's index in the group and the group's
// size (ignored for send/recv). Throws std::runtime_error for what the executor cannot run (a
// send_recv collective, a tag beyond MPI_TAG_UB, an MPI error).
CommOp post_comm(const engine::Op& op, engine::OpId id, MPI_Comm comm, int member, int size);

// The number of values of a completed op that differ from what the op must produce.
std::uint64_t wrong_values(const engine::Op& op, const CommOp& c);

// How many values wrong_values compares.
std::uint64_t checked_values(const engine::Op& op, const CommOp& c);

}  // namespace clustersim::calibrate
