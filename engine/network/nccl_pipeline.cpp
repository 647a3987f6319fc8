// NCCL's chunked pipeline (docs/network.md "Pipeline fill"): how many stages a chunk crosses in
// sequence, how many pipelines run side by side, and the chunk size NCCL picks by message size
// (calcCollChunking in src/enqueue.cc, buffer sizes in src/include/device.h and src/init.cc,
// NVLS chunk sizes in src/transport/nvls.cc; NCCL v2.30.7, validation/collectives/NCCL_TUNING.md
// §6 and §13). Figures restated, not code.
#include <algorithm>

#include "engine/network/nccl_tuning.hpp"

namespace clustersim::engine::nccl {

namespace {

// Bytes of one buffer slot (buffer / NCCL_STEPS), and the data a chunk of one step carries.
constexpr double kSteps = 8.0;                              // NCCL_STEPS
constexpr double kSimpleStep = 4.0 * 1024 * 1024 / kSteps;  // NCCL_BUFFSIZE 4 MiB
constexpr double kLLStep = 524288.0 / kSteps;      // LL: 8 × 512 threads × 8 lines × 16 B
constexpr double kLL128Step = 4915200.0 / kSteps;  // LL128: 120 × 640 × 8 × 8 B
constexpr double kNvlsChunk = 128.0 * 1024;        // NCCL_NVLS_CHUNKSIZE

double chunk_of(Protocol p) {
  switch (p) {
    case Protocol::ll:
      return kLLStep / 2.0;  // half of each 16-byte line is flags
    case Protocol::ll128:
      return kLL128Step / 16.0 * 15.0;  // 15 data elements of each 16-element line
    case Protocol::simple:
      return kSimpleStep;  // trees and NVLS take one step per chunk
  }
  return kSimpleStep;
}

}  // namespace

Pipeline pipeline_of(Row row, Protocol p, const PipelineShape& s) {
  Pipeline pl;
  const double log_nodes = static_cast<double>(log2i(s.nodes));
  const double ppn = static_cast<double>(s.ppn);
  switch (row) {
    case Row::tree: {
      // Up the chain and the tree to the root, then down again: 2·depth hops. With Simple every
      // hop forwards a whole chunk (the tree runs one slice per chunk, and a receiver reads a
      // slice once the sender has posted its tail: src/device/prims_simple.h). LL and LL128
      // carry flags in every line (LL: 16-byte lines of 8 data bytes; LL128: 128-byte lines), so
      // over NVLink the next GPU reads and forwards each line as it lands (src/device/prims_ll.h,
      // prims_ll128.h): the chain inside the node adds its hop latencies (in L) but no chunk time.
      // Only the network hops store and forward: the proxy sends a step once the GPU has posted all
      // of it (its tail; without GPUDirect, once every line carries its flag: sendProxyProgress,
      // src/transport/net.cc).
      pl.fill_steps = p == Protocol::simple ? 2.0 * ((ppn - 1.0) + log_nodes) - 1.0
                                            : std::max(0.0, 2.0 * log_nodes - 1.0);
      pl.step_seconds = s.nodes > 1 ? kNetStepUs * 1e-6 : 0.0;
      pl.pipelines = s.channels;
      pl.chunk_bytes = chunk_of(p);
      if (p == Protocol::ll128) {
        // Smaller chunks when a channel's share would be only a few chunks deep.
        const double depth = 1.0 + log_nodes + 0.1 * ppn;
        pl.rules[0] = {depth * 64.0 / ppn, 131072.0, true};
        pl.rules[1] = {depth * 16.0 / ppn, 32768.0, true};
      }
      break;
    }
    case Row::nvls:
      // Three stages a chunk, each its own warps handing the chunk on through a Simple buffer
      // (RunWorkColl<AllReduce, NVLS, SIMPLE>, one-node branch, src/device/all_reduce.h): scatter
      // into the NVLS buffers, reduce in the switch and multicast out, gather into the output.
      pl.fill_steps = 2.0;
      pl.pipelines = s.nvls_channels * ppn;
      pl.chunk_bytes = kNvlsChunk;
      pl.rules[0] = {64.0, 65536.0, false};
      pl.rules[1] = {8.0, 32768.0, false};
      pl.rules[2] = {2.0, 16384.0, false};
      break;
    case Row::nvls_tree:
      // Up the tree over nodes and down again: 2·log2 N network hops at the pipeline's rate.
      // The NVLS reduce before the first hop and the multicast after the last move a chunk over
      // NVLink while the network hops do, so they add no step of their own.
      pl.fill_steps = 2.0 * log_nodes;
      pl.pipelines = s.nvls_channels * ppn;
      pl.chunk_bytes = s.nodes >= 4 ? 65536.0 : kNvlsChunk;  // nvlsTreeMaxChunkSize
      pl.rules[0] = {32.0, 262144.0, false};
      pl.rules[1] = {16.0, 131072.0, false};
      pl.rules[2] = {4.0, 65536.0, false};
      pl.rules[3] = {1.0, 32768.0, false};
      break;
    case Row::ring:
      // Every link busy from the first step: no fill. Across nodes, every one of the ring's
      // steps is a network step at the ranks where it leaves a node, and step k of a rank waits
      // for step k−1 of the one before it, so the ring cannot finish sooner than its steps ×
      // the cost of a step (a floor; the caller sets its base, latency and rate). NCCL's loop:
      // C channels × n ranks × the chunk (Simple: ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS
      // 4 steps of 512 KiB, sent as 2 slices of SLICESTEPS 2, src/include/collectives.h; LL and
      // LL128 one step), 2(n−1) or n−1 steps a loop (calcCollChunking, src/enqueue.cc).
      if (s.nodes > 1 && s.ring_loop_steps > 0) {
        const double ranks = static_cast<double>(s.ranks > 0 ? s.ranks : s.nodes * s.ppn);
        pl.pipelines = s.channels * ranks;
        pl.chunk_bytes = p == Protocol::simple ? 4.0 * kSimpleStep : chunk_of(p);
        pl.steps_per_chunk = s.ring_loop_steps * (p == Protocol::simple ? 2.0 : 1.0);
        // Each step costs kRingStepPerChannelUs for every channel one NIC's proxy serves, of the
        // channels NCCL keeps for the size (Pipeline::StepFloor).
        pl.step_seconds = kRingStepPerChannelUs * 1e-6;
        pl.step_floor.on = true;
        // Simple sends a chunk as 2 slices, so one slice's proxy actions overlap the other's
        // transfer; LL and LL128 send a chunk as one step, so its cost and its transfer add up.
        pl.step_floor.serial = p != Protocol::simple;
        pl.step_floor.channels = s.channels;
        pl.step_floor.rails = s.rails;
        pl.step_floor.bytes_per_channel = ring_bytes_per_channel(p, ranks);
      }
      break;
    default:
      // CollNet: not modelled (fill 0).
      break;
  }
  return pl;
}

}  // namespace clustersim::engine::nccl
