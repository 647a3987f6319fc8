// One operation of the schedule IR (engine/schedule.hpp) and the names of its kinds, categories,
// collective types and algorithms.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "engine/names.hpp"

namespace clustersim::engine {

using OpId = std::uint32_t;
using Rank = std::uint32_t;
using GroupId = std::uint32_t;
using StreamId = std::uint16_t;
inline constexpr std::uint32_t kNone = 0xffffffffu;

enum class OpKind : std::uint8_t { compute, collective, send, recv, copy };

// What the time of an op is spent on; metrics attribute time by category.
enum class Category : std::uint8_t {
  forward,
  backward,
  recompute,
  optimizer,
  dp_comm,
  tp_comm,
  pp_comm,
  ep_comm,
  cp_comm,  // context parallelism's K/V exchange
};
inline constexpr int kNumCategories = 9;

enum class CollectiveType : std::uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  broadcast,
  reduce,
  scatter,
  gather,
  send_recv,
};
inline constexpr int kNumCollectiveTypes = 9;

// How a collective is carried out on the network. `automatic` lets the simulator choose by size and
// group shape the way NCCL does (see collectives.hpp).
// nvls: NVLink SHARP (in-switch reduction, NVSwitch gen 3+), across nodes NCCL's NVLSTree; collnet:
// in-network reduction in SHARP-capable fabric switches (docs/network.md).
enum class Algorithm : std::uint8_t { automatic, ring, tree, hierarchical, direct, nvls, collnet };

inline constexpr NameTable kOpKindNames{std::array<std::pair<OpKind, std::string_view>, 5>{{
    {OpKind::compute, "compute"},
    {OpKind::collective, "collective"},
    {OpKind::send, "send"},
    {OpKind::recv, "recv"},
    {OpKind::copy, "copy"},
}}};
// DESIGN.md fixes these spellings ("dp-comm", ...).
inline constexpr NameTable kCategoryNames{
    std::array<std::pair<Category, std::string_view>, kNumCategories>{{
        {Category::forward, "forward"},
        {Category::backward, "backward"},
        {Category::recompute, "recompute"},
        {Category::optimizer, "optimizer"},
        {Category::dp_comm, "dp-comm"},
        {Category::tp_comm, "tp-comm"},
        {Category::pp_comm, "pp-comm"},
        {Category::ep_comm, "ep-comm"},
        {Category::cp_comm, "cp-comm"},
    }}};
inline constexpr NameTable kCollectiveTypeNames{
    std::array<std::pair<CollectiveType, std::string_view>, kNumCollectiveTypes>{{
        {CollectiveType::all_reduce, "all_reduce"},
        {CollectiveType::all_gather, "all_gather"},
        {CollectiveType::reduce_scatter, "reduce_scatter"},
        {CollectiveType::all_to_all, "all_to_all"},
        {CollectiveType::broadcast, "broadcast"},
        {CollectiveType::reduce, "reduce"},
        {CollectiveType::scatter, "scatter"},
        {CollectiveType::gather, "gather"},
        {CollectiveType::send_recv, "send_recv"},
    }}};
inline constexpr NameTable kAlgorithmNames{std::array<std::pair<Algorithm, std::string_view>, 7>{{
    {Algorithm::automatic, "auto"},
    {Algorithm::ring, "ring"},
    {Algorithm::tree, "tree"},
    {Algorithm::hierarchical, "hierarchical"},
    {Algorithm::direct, "direct"},
    {Algorithm::nvls, "nvls"},
    {Algorithm::collnet, "collnet"},
}}};

// Where a copy op moves its bytes (the copy's Op::tag): within the GPU's memory (read and
// written in HBM; the compute model costs it), or to or from the GPU's host memory across PCIe
// (Topology::host_endpoint), which the network model carries as a flow on its own stream.
enum class CopyDirection : std::uint8_t { device = 0, to_host = 1, from_host = 2 };
inline constexpr NameTable kCopyDirectionNames{
    std::array<std::pair<CopyDirection, std::string_view>, 3>{{
        {CopyDirection::device, "device"},
        {CopyDirection::to_host, "device-to-host"},
        {CopyDirection::from_host, "host-to-device"},
    }}};

std::string_view to_string(OpKind);
std::string_view to_string(Category);
std::string_view to_string(CollectiveType);
std::string_view to_string(Algorithm);
bool is_communication(Category);
// A micro-batch or chunk index for messages: its number, or "none" for kNone.
std::string index_text(std::uint32_t);

// 40 bytes (56 until 3 Dec 2026, then 48: 0.12 GB less on GPT-3 175B's 15 M ops per 8 bytes).
// Fields that apply to one kind of op only share storage with another kind's: the FLOPs (compute)
// with the tag (everything else), the kernel list (compute) with the group or peer
// (communication), the precision (compute) with the collective type (communication). The shared
// ones are read through accessors that give a kind's unused field its old default (0 FLOPs, tag
// 0, precision 0), so no reader sees another kind's bits. A compute op's FLOPs are not in the op:
// it holds a 32-bit index into its schedule's table of distinct FLOP counts
// (Schedule::flop_values, one entry per layer shape), read through Schedule::flops(op). The
// micro-batch and the chunk are 16 bits each, read through microbatch() and chunk() (kNone where
// they do not apply). Every field but `bytes` is at most 4 bytes, so the natural alignment adds
// no padding: the record is not packed (a packed 44-byte Op was tried and undone, since every
// reference bound to a packed 8-byte field is a misaligned reference that UBSan reports).
struct Op {
  // Most dependencies one op may have (Op::deps_count is 16 bits): ScheduleBuilder rejects an
  // op with more, naming it.
  static constexpr std::uint32_t kMaxDeps = 0xffff;
  // Most a micro-batch or chunk index may be (16 bits each, 0xffff standing for kNone):
  // ScheduleBuilder and trace assembly reject an op with a larger one, naming it.
  static constexpr std::uint32_t kMaxIndex = 0xfffe;
  static constexpr bool fits_index(std::uint32_t i) { return i == kNone || i <= kMaxIndex; }

  std::uint64_t bytes = 0;  // compute/copy: bytes read + written; communication: payload bytes
  Rank rank = 0;
  std::uint32_t deps_begin = 0;  // index into Schedule::deps
  std::uint32_t name = 0;        // index into Schedule::names
  // The two never apply to one op, so they share four bytes:
  union {
    // collective: process group; send/recv: the peer rank
    std::uint32_t group_or_peer = kNone;
    // compute: the kernel list it launches (index into Schedule::kernels), kNone for none. The
    // engine stores and passes it; the compute model costs the list (ComputeModel).
    std::uint32_t kernels;
  };
  std::uint16_t deps_count = 0;  // at most kMaxDeps
  StreamId stream = 0;
  OpKind kind = OpKind::compute;
  Category category = Category::forward;
  // communication: its type. A compute op keeps its precision() here.
  CollectiveType collective = CollectiveType::all_reduce;
  Algorithm algorithm = Algorithm::automatic;

  // compute: its FLOPs' index in Schedule::flop_values (Schedule::flops(op) reads them); set
  // only by whoever interns the FLOPs in that table (ScheduleBuilder, trace assembly).
  std::uint32_t flop_index() const { return payload_; }
  void set_flop_index(std::uint32_t i) { payload_ = i; }
  // send/recv: matching tag; broadcast/reduce/scatter/gather: root's index in the group; copy:
  // its CopyDirection; 0 for compute.
  std::uint32_t tag() const { return kind == OpKind::compute ? 0u : payload_; }
  void set_tag(std::uint32_t t) { payload_ = t; }
  // compute: opaque to the engine, the compute model's index of the arithmetic precision; 0 for
  // other kinds.
  std::uint8_t precision() const {
    return kind == OpKind::compute ? static_cast<std::uint8_t>(collective) : std::uint8_t{0};
  }
  void set_precision(std::uint8_t p) { collective = static_cast<CollectiveType>(p); }
  // The micro-batch the op belongs to, kNone when it does not apply.
  std::uint32_t microbatch() const { return widen(microbatch_); }
  // Which chunk of a larger buffer the op works on (a gradient bucket, a sharded unit); traces
  // show it. kNone when it does not apply.
  std::uint32_t chunk() const { return widen(chunk_); }
  // Both require fits_index(i): the callers check it and name the op that does not fit.
  void set_microbatch(std::uint32_t i) { microbatch_ = narrow(i); }
  void set_chunk(std::uint32_t i) { chunk_ = narrow(i); }

 private:
  static constexpr std::uint16_t kNone16 = 0xffff;
  static std::uint32_t widen(std::uint16_t i) { return i == kNone16 ? kNone : i; }
  static std::uint16_t narrow(std::uint32_t i) {
    return i == kNone ? kNone16 : static_cast<std::uint16_t>(i);
  }

  std::uint16_t microbatch_ = kNone16;
  std::uint16_t chunk_ = kNone16;
  std::uint32_t payload_ = 0;  // compute: flop_index(); other kinds: tag()
};

// A copy to or from host memory: a transfer the network model carries, not GPU work.
inline bool is_host_copy(const Op& op) {
  return op.kind == OpKind::copy && op.tag() != static_cast<std::uint32_t>(CopyDirection::device);
}

}  // namespace clustersim::engine
