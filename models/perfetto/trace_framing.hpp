// Internal to models/perfetto: how a .pftrace file frames its packets, shared by the writer and
// the reader so the two cannot disagree.
#pragma once

#include <cstdint>

namespace clustersim::models::perfetto_framing {

// A trace file is a serialized perfetto.protos.Trace: field 1 (`packet`) repeated, each
// length-delimited (wire type 2), so every packet starts with this tag.
inline constexpr std::uint32_t kPacketTag = (1u << 3) | 2u;

}  // namespace clustersim::models::perfetto_framing
