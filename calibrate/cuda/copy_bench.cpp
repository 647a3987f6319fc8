// Copy bandwidths: inside GPU 0 (read + write counted, as bandwidthTest does), pinned host to
// device and back, and GPU to GPU for every ordered pair (peer access enabled where the hardware
// allows it; otherwise the runtime stages through the host, which is what the pair really gets).
#include <algorithm>
#include <cstdio>
#include <string>

#include "calibrate/cuda/cuda_bench.hpp"

namespace clustersim::calibrate::cuda {

namespace {

std::vector<double> local_sizes(bool quick) {
  std::vector<double> out;
  for (double s = quick ? 1 << 20 : 4096; s <= (quick ? 256.0 : 1024.0) * (1 << 20);
       s *= quick ? 16 : 4)
    out.push_back(s);
  return out;
}

std::vector<double> peer_sizes(bool quick) {
  if (quick) return {1 << 20, 64 << 20};
  std::vector<double> out;
  for (double s = 4096; s <= 1024.0 * (1 << 20); s *= 8)
    out.push_back(s);
  return out;
}

// Enough calls for about 20 ms of copying at `estimate` bytes/s, between 3 and 100.
int iterations_for(double bytes, double estimate) {
  return std::clamp(static_cast<int>(0.02 * estimate / bytes), 3, 100);
}

void print_row(std::ostream* table, const CopyMeasurement& m) {
  if (table == nullptr) return;
  char buf[160];
  const std::string pair =
      m.src >= 0 ? std::to_string(m.src) + (m.dst >= 0 ? "->" + std::to_string(m.dst) : "") : "";
  std::snprintf(buf, sizeof buf, "  %-5s %-7s %14.0f %12.2f %10.2f\n", m.direction.c_str(),
                pair.c_str(), m.bytes, m.seconds * 1e6, m.bandwidth() / 1e9);
  *table << buf;
}

}  // namespace

std::size_t copy_steps(int devices, bool quick) {
  const auto d = static_cast<std::size_t>(devices);
  return 3 * local_sizes(quick).size() + d * (d - 1) * peer_sizes(quick).size();
}

void measure_copies(int devices, bool quick, std::ostream* table, const StepFn& step,
                    std::vector<CopyMeasurement>& out) {
  if (table != nullptr)
    *table << "# copies (d2d counts read + write)\n#  dir   gpus             bytes    time (us)"
              "     GB/s\n";
  const auto record = [&](CopyMeasurement m) {
    print_row(table, m);
    out.push_back(std::move(m));
    step("copies");
  };
  const auto sizes = local_sizes(quick);
  const std::size_t max_bytes = static_cast<std::size_t>(sizes.back());
  CS_CHECK(cudaSetDevice(0));
  {
    Stream stream;
    DeviceBuffer a(max_bytes), b(max_bytes);
    PinnedBuffer host(max_bytes);
    for (double s : sizes) {
      const auto bytes = static_cast<std::size_t>(s);
      const int iters = iterations_for(s, 1e12);
      const double d2d = time_on_stream(stream.get(), iters, [&] {
        CS_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
      });
      record({"d2d", 2.0 * s, d2d, 0, 0});
      const int pcie_iters = iterations_for(s, 2.5e10);
      const double h2d = time_on_stream(stream.get(), pcie_iters, [&] {
        CS_CHECK(cudaMemcpyAsync(a.get(), host.get(), bytes, cudaMemcpyHostToDevice, stream.get()));
      });
      record({"h2d", s, h2d, -1, 0});
      const double d2h = time_on_stream(stream.get(), pcie_iters, [&] {
        CS_CHECK(cudaMemcpyAsync(host.get(), a.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
      });
      record({"d2h", s, d2h, 0, -1});
    }
  }
  // Peer access once per ordered pair; "already enabled" is not an error.
  for (int i = 0; i < devices; ++i) {
    CS_CHECK(cudaSetDevice(i));
    for (int j = 0; j < devices; ++j) {
      int can = 0;
      if (i == j) continue;
      CS_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
      if (!can) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        CS_CHECK(e);
    }
  }
  const auto psizes = peer_sizes(quick);
  const auto peer_max = static_cast<std::size_t>(psizes.back());
  std::vector<DeviceBuffer> buffers;
  for (int i = 0; i < devices && devices > 1; ++i) {
    CS_CHECK(cudaSetDevice(i));
    buffers.emplace_back(peer_max);
  }
  for (int src = 0; src < devices && devices > 1; ++src) {
    for (int dst = 0; dst < devices; ++dst) {
      if (src == dst) continue;
      CS_CHECK(cudaSetDevice(src));
      Stream stream;
      for (double s : psizes) {
        const auto bytes = static_cast<std::size_t>(s);
        const double t = time_on_stream(stream.get(), iterations_for(s, 1e11), [&] {
          CS_CHECK(cudaMemcpyPeerAsync(buffers[static_cast<std::size_t>(dst)].get(), dst,
                                       buffers[static_cast<std::size_t>(src)].get(), src, bytes,
                                       stream.get()));
        });
        record({"peer", s, t, src, dst});
      }
    }
  }
}

}  // namespace clustersim::calibrate::cuda
