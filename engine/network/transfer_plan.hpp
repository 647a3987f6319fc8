// A collective (or a send/recv pair) as the network sees it: phases that run one after the other.
// In each phase a fixed latency elapses first, then all of the phase's flows run concurrently;
// the phase ends when its last flow ends. Bytes are given per byte of collective payload, so one
// plan serves every message size on the same group (see collectives.hpp).
#pragma once

#include <array>
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

struct Phase {
  Time latency;  // the algorithm's latency term for this phase (steps × per-step latency)
  std::vector<FlowSpec> flows;
  // The most payload bytes per second the phase can move whatever the links allow (NCCL's
  // per-channel protocol and algorithm limits, NVLS efficiency); 0 = links only. A flow's rate is
  // capped at its bytes_per_payload_byte × rate_cap.
  double rate_cap = 0.0;
};

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
};

}  // namespace clustersim::engine
