#include "calibrate/mpi/exec_comm.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim::calibrate {

namespace {

using engine::CollectiveType;

// Values are small integers, exact in float, so results compare with ==. `i % 4` varies them
// along the buffer so a shifted or truncated result shows.
float pattern(int i) {
  return static_cast<float>(i % 4);
}

void check_mpi(int rc, const char* call, engine::OpId id) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(call) + " failed for op " + std::to_string(id) + ": " +
                           text);
}

// Elements in the buffer: the payload in floats, at least one per member and a multiple of the
// group size (as nccl-tests rounds counts) so that chunked collectives split it evenly.
int element_count(std::uint64_t bytes, int n) {
  const std::uint64_t floats = std::max<std::uint64_t>(bytes / sizeof(float), 1);
  std::uint64_t count = std::max<std::uint64_t>(floats - floats % static_cast<std::uint64_t>(n),
                                                static_cast<std::uint64_t>(n));
  if (count > 0x7fffffffu) throw std::runtime_error("payload too large for one MPI call");
  return static_cast<int>(count);
}

int peer_tag(const engine::Op& op, engine::OpId id) {
  int* ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  const std::uint32_t limit = found != 0 && ub != nullptr ? static_cast<std::uint32_t>(*ub) : 32767;
  if (op.tag() > limit)
    throw std::runtime_error("op " + std::to_string(id) + ": tag " + std::to_string(op.tag()) +
                             " is above this MPI's MPI_TAG_UB " + std::to_string(limit));
  return static_cast<int>(op.tag());
}

}  // namespace

CommOp post_comm(const engine::Op& op, engine::OpId id, MPI_Comm comm, int member, int size) {
  CommOp c;
  c.id = id;
  const bool p2p = op.kind == engine::OpKind::send || op.kind == engine::OpKind::recv;
  c.member = p2p ? static_cast<int>(op.group_or_peer) : member;
  c.group_size = p2p ? 2 : size;
  const int n = c.group_size;
  c.count = element_count(op.bytes, p2p ? 1 : n);
  const int chunk = c.count / n;
  c.in.resize(static_cast<std::size_t>(c.count));
  c.out.assign(static_cast<std::size_t>(c.count), -1.0f);
  auto in = [&](int i) -> float& { return c.in[static_cast<std::size_t>(i)]; };
  if (op.kind == engine::OpKind::send) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < c.count; ++i)
      in(i) = static_cast<float>(me % 1000) * 4 + pattern(i);
    check_mpi(MPI_Isend(c.in.data(), c.count, MPI_FLOAT, c.member, peer_tag(op, id), MPI_COMM_WORLD,
                        &c.request),
              "MPI_Isend", id);
    return c;
  }
  if (op.kind == engine::OpKind::recv) {
    check_mpi(MPI_Irecv(c.out.data(), c.count, MPI_FLOAT, c.member, peer_tag(op, id),
                        MPI_COMM_WORLD, &c.request),
              "MPI_Irecv", id);
    return c;
  }
  const int root = static_cast<int>(op.tag());
  if (root >= n) throw std::runtime_error("op " + std::to_string(id) + ": root outside its group");
  switch (op.collective) {
    case CollectiveType::all_reduce:
    case CollectiveType::reduce:
      for (int i = 0; i < c.count; ++i)
        in(i) = static_cast<float>(member + 1) + pattern(i);
      if (op.collective == CollectiveType::all_reduce)
        check_mpi(MPI_Iallreduce(c.in.data(), c.out.data(), c.count, MPI_FLOAT, MPI_SUM, comm,
                                 &c.request),
                  "MPI_Iallreduce", id);
      else
        check_mpi(MPI_Ireduce(c.in.data(), c.out.data(), c.count, MPI_FLOAT, MPI_SUM, root, comm,
                              &c.request),
                  "MPI_Ireduce", id);
      break;
    case CollectiveType::all_gather:
    case CollectiveType::gather:
      for (int i = 0; i < chunk; ++i)
        in(i) = static_cast<float>(member * 4) + pattern(i);
      if (op.collective == CollectiveType::all_gather)
        check_mpi(MPI_Iallgather(c.in.data(), chunk, MPI_FLOAT, c.out.data(), chunk, MPI_FLOAT,
                                 comm, &c.request),
                  "MPI_Iallgather", id);
      else
        check_mpi(MPI_Igather(c.in.data(), chunk, MPI_FLOAT, c.out.data(), chunk, MPI_FLOAT, root,
                              comm, &c.request),
                  "MPI_Igather", id);
      break;
    case CollectiveType::reduce_scatter:
      for (int i = 0; i < c.count; ++i)
        in(i) = static_cast<float>(member + i / chunk);
      check_mpi(MPI_Ireduce_scatter_block(c.in.data(), c.out.data(), chunk, MPI_FLOAT, MPI_SUM,
                                          comm, &c.request),
                "MPI_Ireduce_scatter_block", id);
      break;
    case CollectiveType::all_to_all:
    case CollectiveType::scatter:
      // Chunk j goes to member j: it carries the sender and the receiver.
      for (int i = 0; i < c.count; ++i)
        in(i) = static_cast<float>(member * 1000 + i / chunk);
      if (op.collective == CollectiveType::all_to_all)
        check_mpi(MPI_Ialltoall(c.in.data(), chunk, MPI_FLOAT, c.out.data(), chunk, MPI_FLOAT, comm,
                                &c.request),
                  "MPI_Ialltoall", id);
      else
        check_mpi(MPI_Iscatter(c.in.data(), chunk, MPI_FLOAT, c.out.data(), chunk, MPI_FLOAT, root,
                               comm, &c.request),
                  "MPI_Iscatter", id);
      break;
    case CollectiveType::broadcast:
      for (int i = 0; i < c.count; ++i)
        in(i) = member == root ? 42.0f + pattern(i) : -1.0f;
      check_mpi(MPI_Ibcast(c.in.data(), c.count, MPI_FLOAT, root, comm, &c.request), "MPI_Ibcast",
                id);
      break;
    case CollectiveType::send_recv:
      throw std::runtime_error("op " + std::to_string(id) +
                               ": a send_recv collective; the executor runs send and recv ops");
  }
  return c;
}

namespace {

template <typename Want>
std::uint64_t count_wrong(const std::vector<float>& got, int count, Want want) {
  std::uint64_t wrong = 0;
  for (int i = 0; i < count; ++i)
    wrong += got[static_cast<std::size_t>(i)] != want(i) ? 1u : 0u;
  return wrong;
}

}  // namespace

std::uint64_t checked_values(const engine::Op& op, const CommOp& c) {
  const int n = c.group_size, root = static_cast<int>(op.tag());
  if (op.kind == engine::OpKind::send) return 0;
  if (op.kind == engine::OpKind::recv) return static_cast<std::uint64_t>(c.count);
  switch (op.collective) {
    case CollectiveType::reduce:
    case CollectiveType::gather:
      return c.member == root ? static_cast<std::uint64_t>(c.count) : 0;
    case CollectiveType::reduce_scatter:
    case CollectiveType::scatter:
      return static_cast<std::uint64_t>(c.count / n);
    default:
      return static_cast<std::uint64_t>(c.count);
  }
}

std::uint64_t wrong_values(const engine::Op& op, const CommOp& c) {
  const int n = c.group_size, me = c.member, chunk = c.count / n;
  const int root = static_cast<int>(op.tag());
  if (op.kind == engine::OpKind::send) return 0;
  if (op.kind == engine::OpKind::recv)
    return count_wrong(c.out, c.count,
                       [&](int i) { return static_cast<float>(me % 1000) * 4 + pattern(i); });
  const float sum_members = static_cast<float>(n * (n + 1) / 2);
  switch (op.collective) {
    case CollectiveType::all_reduce:
      return count_wrong(c.out, c.count,
                         [&](int i) { return sum_members + static_cast<float>(n) * pattern(i); });
    case CollectiveType::reduce:
      if (me != root) return 0;
      return count_wrong(c.out, c.count,
                         [&](int i) { return sum_members + static_cast<float>(n) * pattern(i); });
    case CollectiveType::all_gather:
      return count_wrong(c.out, c.count, [&](int i) {
        return static_cast<float>((i / chunk) * 4) + pattern(i % chunk);
      });
    case CollectiveType::gather:
      if (me != root) return 0;
      return count_wrong(c.out, c.count, [&](int i) {
        return static_cast<float>((i / chunk) * 4) + pattern(i % chunk);
      });
    case CollectiveType::reduce_scatter:
      // Chunk `me` summed over members m: Σ (m + me) = n(n−1)/2 + n·me.
      return count_wrong(c.out, chunk,
                         [&](int) { return static_cast<float>(n * (n - 1) / 2 + n * me); });
    case CollectiveType::all_to_all:
      return count_wrong(c.out, c.count,
                         [&](int i) { return static_cast<float>((i / chunk) * 1000 + me); });
    case CollectiveType::scatter:
      return count_wrong(c.out, chunk, [&](int) { return static_cast<float>(root * 1000 + me); });
    case CollectiveType::broadcast:
      return count_wrong(c.in, c.count, [&](int i) { return 42.0f + pattern(i); });
    case CollectiveType::send_recv:
      return 0;
  }
  return 0;
}

}  // namespace clustersim::calibrate
