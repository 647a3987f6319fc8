// NCCL collectives over every local GPU from one process (ncclCommInitAll), swept like nccl-tests:
// 8 B to 1 GiB doubling (--quick: ×4 up to 64 MiB), float data, out-of-place. Each size first
// runs once on patterned inputs and counts wrong elements (#wrong), then is timed over several
// iterations between two host clock reads around all streams, as nccl-tests does.
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "calibrate/backend.hpp"
#include "calibrate/cuda/cuda_bench.hpp"
#include "calibrate/cuda/kernels.hpp"
#include "engine/network/collectives.hpp"

namespace clustersim::calibrate::cuda {

namespace {

// One rank's view of a run: its buffers, stream and communicator.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// `count` is the nccl-tests element count of the size (the whole buffer for all_gather,
// reduce_scatter and all_to_all), divisible by the rank count.
struct Collective {
  const char* name;
  engine::CollectiveType type;
  void (*launch)(const Rank& r, int rank, int n, std::size_t count);
  // Input pattern a + b·⌊i/chunk⌋ of `rank`, and the output expected (chunk 0: the whole buffer
  // is one value). Fills only count_in elements, checks count_out.
  struct Pattern {
    float a, b;
    std::size_t chunk, elements;
  };
  Pattern (*input)(int rank, int n, std::size_t count);
  Pattern (*expected)(int rank, int n, std::size_t count);  // elements 0: nothing to check
};

using P = Collective::Pattern;
float f(long v) {
  return static_cast<float>(v);
}

void run_all_reduce(const Rank& r, int, int, std::size_t count) {
  CS_CHECK(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
}
void run_all_gather(const Rank& r, int, int n, std::size_t count) {
  CS_CHECK(ncclAllGather(r.send, r.recv, count / static_cast<std::size_t>(n), ncclFloat, r.comm,
                         r.stream));
}
void run_reduce_scatter(const Rank& r, int, int n, std::size_t count) {
  CS_CHECK(ncclReduceScatter(r.send, r.recv, count / static_cast<std::size_t>(n), ncclFloat,
                             ncclSum, r.comm, r.stream));
}
void run_all_to_all(const Rank& r, int, int n, std::size_t count) {
  // NCCL has no all-to-all call: grouped send/recv with every peer, as nccl-tests alltoall does.
  const std::size_t chunk = count / static_cast<std::size_t>(n);
  for (int peer = 0; peer < n; ++peer) {
    const auto off = static_cast<std::size_t>(peer) * chunk;
    CS_CHECK(ncclSend(r.send + off, chunk, ncclFloat, peer, r.comm, r.stream));
    CS_CHECK(ncclRecv(r.recv + off, chunk, ncclFloat, peer, r.comm, r.stream));
  }
}
void run_broadcast(const Rank& r, int, int, std::size_t count) {
  CS_CHECK(ncclBroadcast(r.send, r.recv, count, ncclFloat, 0, r.comm, r.stream));
}
void run_reduce(const Rank& r, int, int, std::size_t count) {
  CS_CHECK(ncclReduce(r.send, r.recv, count, ncclFloat, ncclSum, 0, r.comm, r.stream));
}
void run_send_recv(const Rank& r, int rank, int n, std::size_t count) {
  // A ring: every rank sends to the next and receives from the previous (nccl-tests sendrecv).
  CS_CHECK(ncclSend(r.send, count, ncclFloat, (rank + 1) % n, r.comm, r.stream));
  CS_CHECK(ncclRecv(r.recv, count, ncclFloat, (rank + n - 1) % n, r.comm, r.stream));
}

// Inputs are small integers, so sums are exact in float and the check compares with ==.
const Collective kCollectives[] = {
    {"all_reduce", engine::CollectiveType::all_reduce, run_all_reduce,
     [](int rank, int, std::size_t c) {
       return P{f(rank + 1), 0, 0, c};
     },
     [](int, int n, std::size_t c) {
       return P{f(n * (n + 1) / 2), 0, 0, c};
     }},
    {"all_gather", engine::CollectiveType::all_gather, run_all_gather,
     [](int rank, int n, std::size_t c) {
       return P{f(rank), 0, 0, c / static_cast<std::size_t>(n)};
     },
     [](int, int n, std::size_t c) {
       return P{0, 1, c / static_cast<std::size_t>(n), c};
     }},
    {"reduce_scatter", engine::CollectiveType::reduce_scatter, run_reduce_scatter,
     [](int rank, int n, std::size_t c) {
       return P{f(rank), 1, c / static_cast<std::size_t>(n), c};
     },
     // Chunk `rank` summed over ranks r: Σ (r + rank) = n(n−1)/2 + n·rank.
     [](int rank, int n, std::size_t c) {
       return P{f(n * (n - 1) / 2 + n * rank), 0, 0, c / static_cast<std::size_t>(n)};
     }},
    {"all_to_all", engine::CollectiveType::all_to_all, run_all_to_all,
     [](int rank, int n, std::size_t c) {
       return P{f(rank * 1000), 1, c / static_cast<std::size_t>(n), c};
     },
     // Chunk j came from rank j, which sent this rank its chunk number `rank`.
     [](int rank, int n, std::size_t c) {
       return P{f(rank), 1000, c / static_cast<std::size_t>(n), c};
     }},
    {"broadcast", engine::CollectiveType::broadcast, run_broadcast,
     [](int rank, int, std::size_t c) {
       return P{rank == 0 ? 42.0f : -1.0f, 0, 0, c};
     },
     [](int, int, std::size_t c) {
       return P{42.0f, 0, 0, c};
     }},
    {"reduce", engine::CollectiveType::reduce, run_reduce,
     [](int rank, int, std::size_t c) {
       return P{f(rank + 1), 0, 0, c};
     },
     [](int rank, int n, std::size_t c) {
       return P{f(n * (n + 1) / 2), 0, 0, rank == 0 ? c : 0};  // only the root receives
     }},
    {"send_recv", engine::CollectiveType::send_recv, run_send_recv,
     [](int rank, int, std::size_t c) {
       return P{f(rank), 0, 0, c};
     },
     [](int rank, int n, std::size_t c) {
       return P{f((rank + n - 1) % n), 0, 0, c};
     }},
};

std::vector<double> sizes(bool quick, double limit) {
  std::vector<double> out;
  for (double s = 8; s <= std::min(limit, (quick ? 64.0 : 1024.0) * (1 << 20)); s *= quick ? 4 : 2)
    out.push_back(s);
  return out;
}

// Releases communicators, streams and buffers on every path.
class Ranks {
 public:
  explicit Ranks(int n, std::size_t bytes) : ranks_(static_cast<std::size_t>(n)) {
    std::vector<ncclComm_t> comms(ranks_.size());
    std::vector<int> devices(ranks_.size());
    for (int i = 0; i < n; ++i)
      devices[static_cast<std::size_t>(i)] = i;
    CS_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    for (int i = 0; i < n; ++i) {
      Rank& r = ranks_[static_cast<std::size_t>(i)];
      r.device = i;
      r.comm = comms[static_cast<std::size_t>(i)];
      CS_CHECK(cudaSetDevice(i));
      CS_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
      CS_CHECK(cudaMalloc(&r.send, bytes));
      CS_CHECK(cudaMalloc(&r.recv, bytes));
    }
  }
  ~Ranks() {
    for (Rank& r : ranks_) {
      cudaSetDevice(r.device);
      if (r.send != nullptr) cudaFree(r.send);
      if (r.recv != nullptr) cudaFree(r.recv);
      if (r.stream != nullptr) cudaStreamDestroy(r.stream);
      if (r.comm != nullptr) ncclCommDestroy(r.comm);
    }
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  std::vector<Rank>& all() { return ranks_; }

 private:
  std::vector<Rank> ranks_;
};

// Every rank's call inside one group, as one process driving several GPUs must.
void launch_all(std::vector<Rank>& ranks, const Collective& c, std::size_t count) {
  const int n = static_cast<int>(ranks.size());
  CS_CHECK(ncclGroupStart());
  for (int i = 0; i < n; ++i)
    c.launch(ranks[static_cast<std::size_t>(i)], i, n, count);
  CS_CHECK(ncclGroupEnd());
}

void sync_all(std::vector<Rank>& ranks) {
  for (Rank& r : ranks) {
    CS_CHECK(cudaSetDevice(r.device));
    CS_CHECK(cudaStreamSynchronize(r.stream));
  }
}

// Runs `c` once on patterned inputs; the number of wrong output elements over all ranks. Each
// rank counts on its own GPU (counters[i]).
std::int64_t check(std::vector<Rank>& ranks, const Collective& c, std::size_t count,
                   const std::vector<DeviceBuffer>& counters) {
  const int n = static_cast<int>(ranks.size());
  for (int i = 0; i < n; ++i) {
    Rank& r = ranks[static_cast<std::size_t>(i)];
    CS_CHECK(cudaSetDevice(r.device));
    const P in = c.input(i, n, count);
    fill_pattern(r.send, in.elements, in.a, in.b, in.chunk, r.stream);
    CS_CHECK(cudaMemsetAsync(r.recv, 0, count * sizeof(float), r.stream));
  }
  launch_all(ranks, c, count);
  sync_all(ranks);
  std::int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    Rank& r = ranks[static_cast<std::size_t>(i)];
    const P want = c.expected(i, n, count);
    if (want.elements == 0) continue;
    CS_CHECK(cudaSetDevice(r.device));
    auto* wrong = static_cast<unsigned long long*>(counters[static_cast<std::size_t>(i)].get());
    CS_CHECK(cudaMemsetAsync(wrong, 0, sizeof *wrong, r.stream));
    count_mismatches(r.recv, want.elements, want.a, want.b, want.chunk, wrong, r.stream);
    unsigned long long host = 0;
    CS_CHECK(cudaMemcpyAsync(&host, wrong, sizeof host, cudaMemcpyDeviceToHost, r.stream));
    CS_CHECK(cudaStreamSynchronize(r.stream));
    total += static_cast<std::int64_t>(host);
  }
  return total;
}

}  // namespace

std::size_t nccl_steps(int devices, bool quick) {
  return devices < 2 ? 0 : std::size(kCollectives) * sizes(quick, 1e30).size();
}

void measure_collectives(int devices, bool quick, std::ostream* table, const StepFn& step,
                         std::vector<CollectiveMeasurement>& out) {
  if (devices < 2) {
    if (table != nullptr) *table << "# one GPU: NCCL collectives need at least 2, skipped\n";
    return;
  }
  // Two buffers of the largest size per GPU, within 80 % of the smallest free memory.
  double limit = 1e30;
  for (int i = 0; i < devices; ++i) {
    CS_CHECK(cudaSetDevice(i));
    std::size_t free_bytes = 0, total_bytes = 0;
    CS_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    limit = std::min(limit, 0.4 * static_cast<double>(free_bytes));
  }
  const auto sweep = sizes(quick, limit);
  Ranks ranks(devices, static_cast<std::size_t>(sweep.back()));
  std::vector<DeviceBuffer> counters;
  for (int i = 0; i < devices; ++i) {
    CS_CHECK(cudaSetDevice(i));
    counters.emplace_back(sizeof(unsigned long long));
  }
  const int iters = quick ? 5 : 20;
  const auto n = static_cast<std::uint32_t>(devices);
  for (const Collective& c : kCollectives) {
    if (table != nullptr) print_collective_header(*table, c.name, n);
    for (double s : sweep) {
      std::size_t count = static_cast<std::size_t>(s) / sizeof(float);
      count -= count % n;  // nccl-tests rounds counts to a multiple of the rank count
      if (count == 0) {
        step(c.name);
        continue;
      }
      const std::int64_t wrong = check(ranks.all(), c, count, counters);
      launch_all(ranks.all(), c, count);  // warm-up
      sync_all(ranks.all());
      const auto t0 = std::chrono::steady_clock::now();
      for (int it = 0; it < iters; ++it)
        launch_all(ranks.all(), c, count);
      sync_all(ranks.all());
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
      CollectiveMeasurement m;
      m.collective = c.name;
      m.ranks = n;
      m.nodes = 1;
      m.bytes = static_cast<double>(count * sizeof(float));
      m.count = count;
      m.dtype = "float";
      m.seconds = std::max(t, 1e-9);
      m.algbw = m.bytes / m.seconds;
      m.busbw = m.algbw * engine::bus_bandwidth_factor(c.type, n);
      m.wrong = wrong;
      if (table != nullptr) print_collective_row(*table, m);
      out.push_back(m);
      step(c.name);
    }
  }
}

}  // namespace clustersim::calibrate::cuda
