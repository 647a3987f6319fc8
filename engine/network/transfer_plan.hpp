// A collective (or a send/recv pair) as the network sees it: phases that run one after the other.
// In each phase a fixed latency elapses first, then all of the phase's flows run concurrently;
// the phase ends when its last flow ends. Bytes are given per byte of collective payload, so one
// plan serves every message size on the same group (see collectives.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/names.hpp"
#include "engine/schedule.hpp"
#include "engine/topology.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

// NCCL's wire protocols (docs/network.md "Protocols"): LL (8 data bytes per 16-byte line, lowest
// latency), LL128 (120 of 128 bytes), Simple (bulk copies, highest bandwidth).
enum class Protocol : std::uint8_t { ll, ll128, simple };
inline constexpr int kNumProtocols = 3;
inline constexpr NameTable kProtocolNames{
    std::array<std::pair<Protocol, std::string_view>, kNumProtocols>{{
        {Protocol::ll, "LL"},
        {Protocol::ll128, "LL128"},
        {Protocol::simple, "Simple"},
    }}};
inline std::string_view to_string(Protocol p) {
  return kProtocolNames.name(p);
}

struct FlowSpec {
  EndpointId src = 0;
  EndpointId dst = 0;
  double bytes_per_payload_byte = 0.0;  // flow bytes = this × collective payload bytes
};

// NCCL's chunked pipeline (docs/network.md "Pipeline fill"): each of `pipelines` concurrent
// pipelines (channels, × NVLS heads) cuts its share of the payload into chunks that cross
// `fill_steps` + 1 store-and-forward stages in sequence (tree depth up and down, network hops).
// The last chunk leaves the first stage when the bandwidth term ends, and still has `fill_steps`
// stages to cross, each taking one chunk at the pipeline's rate: fill = fill_steps ·
// pipelines · chunk(S) · seconds_per_byte. Each chunk a pipeline sends across the network is
// also one proxy step, and each step costs `step_seconds` on top (docs/network.md "Network
// steps"): steps(S) = ⌈S / (pipelines · chunk(S))⌉. NCCL picks the chunk by message size
// (calcCollChunking, src/enqueue.cc): start from `chunk_bytes` and apply `rules` in order.
struct ChunkRule {
  double min_chunks = 0.0;  // while S / (pipelines · chunk) < min_chunks
  double floor = 0.0;       // and chunk > floor:
  bool halve = true;        // chunk /= 2 (or chunk = floor)
};
struct Pipeline {
  double fill_steps = 0.0;  // 0 = no fill (a ring keeps every link busy from the first step)
  double pipelines = 1.0;
  double chunk_bytes = 0.0;
  double seconds_per_byte = 0.0;  // the plan's uncontended time per payload byte
  double step_seconds = 0.0;      // per network step of one pipeline; 0 = no network steps
                                  // (a ring's: per channel its NIC carries, StepFloor below)
  double steps_per_chunk = 1.0;   // network steps a pipeline takes per chunk (a ring loop's)
  std::array<ChunkRule, 4> rules{};
  // A ring's network steps are a floor, not an addition (docs/network.md "Network steps"): its
  // time is at least NCCL's base latency plus steps(S) × the cost of one ring step, and the fill
  // makes up what the latency term and the uncontended bandwidth term leave of that. NCCL's proxy
  // takes each of its network connections one action per pass, so a ring step costs
  // `step_seconds` for every channel one NIC carries: ⌈nc / rails⌉, where nc is the channels NCCL
  // keeps for the size (topoGetAlgoInfo, src/enqueue.cc: ⌊S / bytes_per_channel⌋, 1..channels).
  // With `serial` (LL, LL128: one step a chunk, no slices) a step's cost does not overlap its
  // transfer: the proxy sends a step only once the GPU has posted all of it, and the next rank
  // forwards it only once it has landed, so the floor is added to the bandwidth term, not set
  // against it (docs/network.md "The ring's steps").
  struct StepFloor {
    bool on = false;
    bool serial = false;
    double base = 0.0;               // seconds
    double latency = 0.0;            // the phase's latency term, seconds
    double seconds_per_byte = 0.0;   // uncontended, at the phase's rate cap
    double channels = 1.0;           // the ring's channels
    double rails = 1.0;              // the NICs they cross on one node
    double bytes_per_channel = 0.0;  // 0 = every channel at every size
    // The channels one NIC's proxy serves for `payload` bytes.
    double channels_per_nic(double payload) const {
      const double nc = bytes_per_channel > 0.0
                            ? std::clamp(std::floor(payload / bytes_per_channel), 1.0, channels)
                            : channels;
      return std::ceil(nc / std::max(rails, 1.0));
    }
  } step_floor;
  // NCCL's send/receive parts (docs/network.md "All-to-all: send/receive parts"): an all-to-all
  // posts a send of S/n to every peer, NCCL stripes each over `channels(S)` p2p channels (a part
  // each: addP2pToPlan, src/enqueue.cc), and a part moves in chunks of `chunk` through two
  // stages, the sender's copy into the peer's FIFO and the receiver's copy out of it. So the first
  // chunk of every part crosses one stage before the links run full, at the part's share of the
  // busiest link: fill = n · channels(S) · min(chunk, part) · seconds_per_byte (the busiest
  // link's uncontended time per payload byte; n · channels parts share the payload). A part is
  // one channel's work, and a channel moves at most `channel_rate` (docs/network.md "Sends: a
  // channel's rate"), so no part crosses faster than that: the fill takes the slower of the two
  // rates, and the sends together move at most rate_cap(S) payload bytes a second.
  struct SendRecvParts {
    bool on = false;
    double ranks = 1.0;         // n: each send carries payload / n
    double chunk = 0.0;         // NCCL's p2pChunkSize
    double channels_min = 1.0;  // nChannelsMin of scheduleP2pTasksToPlan
    double channels_max = 1.0;  // p2pnChannelsPerPeer
    double min_part = 0.0;      // a part is never split below this
    double max_part = 0.0;      // parts above this take twice the channels, up to channels_max
    double seconds_per_byte = 0.0;
    double channel_rate = 0.0;  // bytes/s one p2p channel moves; 0 = no limit
    double p2p_channels = 0.0;  // the communicator's p2p channels; 0 = no limit
    // NCCL's channels for one send of `bytes` (addP2pToPlan).
    double channels(double bytes) const {
      double nc = std::min(channels_min, std::ceil(bytes / min_part));
      double part = std::max(min_part, std::ceil(bytes / nc));
      while (part > max_part && nc <= channels_max / 2.0) {
        nc *= 2.0;
        part = std::ceil(bytes / nc);
      }
      return nc;
    }
    double fill_seconds(double payload) const {
      const double bytes = payload / ranks;
      const double nc = channels(bytes);
      const double parts = ranks * nc;
      // Parts beyond the p2p channels share one, and its rate (rate_cap).
      const double sharing = parts / ctas_of(parts);
      const double per_part =
          std::max(parts * seconds_per_byte, channel_rate > 0.0 ? sharing / channel_rate : 0.0);
      return std::min(chunk, bytes / nc) * per_part;
    }
    // The payload bytes a second the n sends' parts move at most: a channel each, n ·
    // channels(S/n) of them, but parts beyond the communicator's p2p channels share one (its
    // thread block serves them in turn), so at most ctas(S) channels' rates.
    double rate_cap(double payload) const {
      if (!on || channel_rate <= 0.0 || payload <= 0.0) return 0.0;
      return ctas(payload) * channel_rate;
    }
    // The thread blocks (one per channel, each on an SM) NCCL's kernel runs on a rank for the n
    // sends of `payload`: every part a channel, the channels its parts use at most the
    // communicator's p2p channels (the kernel's grid is the plan's channel mask).
    double ctas(double payload) const { return ctas_of(ranks * channels(payload / ranks)); }
    double ctas_of(double parts) const {
      return p2p_channels > 0.0 ? std::min(p2p_channels, parts) : parts;
    }
  } send_recv;

  double chunk(double payload) const {
    double c = chunk_bytes;
    for (const ChunkRule& r : rules) {
      while (r.min_chunks > 0.0 && std::floor(payload / (pipelines * c)) < r.min_chunks &&
             c > r.floor)
        c = r.halve ? std::floor(c / 2.0) : r.floor;
    }
    return std::min(c, payload / pipelines);  // a pipeline's chunk never exceeds its share
  }
  // The network steps one pipeline takes for `payload` (NCCL's proxy nsteps: steps_per_chunk
  // per loop of pipelines × chunk bytes).
  double steps(double payload) const {
    return std::ceil(payload / (pipelines * chunk(payload))) * steps_per_chunk;
  }
  Time fill(double payload) const {
    if (payload > 0.0 && send_recv.on) return Time::from_seconds(send_recv.fill_seconds(payload));
    if (payload <= 0.0 || (fill_steps <= 0.0 && step_seconds <= 0.0)) return Time::zero();
    if (step_floor.on) {
      const double need =
          step_floor.base + steps(payload) * step_seconds * step_floor.channels_per_nic(payload);
      const double have =
          step_floor.latency + (step_floor.serial ? 0.0 : payload * step_floor.seconds_per_byte);
      return Time::from_seconds(std::max(0.0, need - have));
    }
    const double stages = fill_steps * pipelines * chunk(payload) * seconds_per_byte;
    return Time::from_seconds(stages + (step_seconds > 0.0 ? steps(payload) * step_seconds : 0.0));
  }
};

struct Phase {
  Time latency;  // the algorithm's latency term for this phase (steps × per-step latency)
  std::vector<FlowSpec> flows;
  // The most payload bytes per second the phase can move whatever the links allow (NCCL's
  // per-channel protocol and algorithm limits, NVLS efficiency); 0 = links only. A flow's rate is
  // capped at its bytes_per_payload_byte × rate_cap.
  double rate_cap = 0.0;
  Pipeline pipeline;  // NCCL's pipeline fill, added to the latency by message size
  // The algorithm's sequential steps (a ring all-reduce 2(n−1), an all-gather n−1; 1 where the
  // algorithm has no step structure). The simgrid model sends each ring flow as this many messages.
  std::uint32_t steps = 1;

  // The phase's latency for `payload` bytes: the fixed term plus the pipeline fill.
  Time latency_for(double payload) const { return latency + pipeline.fill(payload); }
  // The phase's rate limit for `payload` bytes: rate_cap, and a send's channels, whose count
  // grows with the send (Pipeline::SendRecvParts); 0 = links only.
  double rate_cap_for(double payload) const {
    const double parts = pipeline.send_recv.rate_cap(payload);
    if (parts <= 0.0) return rate_cap;
    return rate_cap > 0.0 ? std::min(rate_cap, parts) : parts;
  }
};

// Where a network model keeps a plan's routes (PhaseRoutes, engine/network/model_parts.hpp): the
// model that started the plan first (its id) and the plan's index there, written by that model
// so that later starts of the same plan need no lookup. A copy, or a plan assigned to, has none:
// its flows may differ from those the index's routes were found for.
class RouteSlot {
 public:
  RouteSlot() = default;
  RouteSlot(const RouteSlot&) noexcept {}
  RouteSlot& operator=(const RouteSlot&) noexcept {
    owner_ = index_ = kNone;
    return *this;
  }
  std::uint32_t index_in(std::uint32_t owner) const { return owner == owner_ ? index_ : kNone; }
  void set(std::uint32_t owner, std::uint32_t index) const {
    owner_ = owner;
    index_ = index;
  }

 private:
  // A cache beside the plan's contents, not part of them: set through a const plan.
  mutable std::uint32_t owner_ = kNone;
  mutable std::uint32_t index_ = kNone;
};

// A plan's flows must not change once a network model has started it (while that model lives):
// the model keeps their routes. A changed plan is a new plan (a copy).
struct TransferPlan {
  std::vector<Phase> phases;
  // What the plan carries out, so a calibration profile can be looked up by (type, group shape);
  // ranks == 0 for hand-built plans, which never take a profile's figures.
  CollectiveType collective = CollectiveType::send_recv;
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
  // How NCCL would run it (for traces and notes): the algorithm, its protocol and channel count.
  Algorithm algorithm = Algorithm::automatic;
  Protocol protocol = Protocol::simple;
  std::uint16_t channels = 1;
  RouteSlot route_slot = {};  // where the network model that started it keeps its routes

  // The channels (thread blocks, one SM each) NCCL runs it on for `payload` bytes: `channels`,
  // or for sends in parts as many as their parts take at that size (SendRecvParts::ctas).
  std::uint16_t channels_at(double payload) const {
    for (const Phase& phase : phases)
      if (phase.pipeline.send_recv.on)
        return static_cast<std::uint16_t>(
            std::clamp(phase.pipeline.send_recv.ctas(payload), 1.0, 65535.0));
    return channels;
  }
};

}  // namespace clustersim::engine
