// The schedule IR: per-rank operation DAGs plus process groups. Every parallel plan in models/
// compiles to this, the simulator runs it, and the real executor (calibrate/) replays it.
//
// Ops live in one flat array of records (millions of them at 10k GPUs; a data-parallel replica's
// stamped copies read through replica 0's records, op_store.hpp), their dependencies in a second
// one.
// Names are interned: an op stores an index, the micro-batch is a separate field, so a label such
// as "L12.mlp fwd mb3" costs four bytes per op instead of a string.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/huge_pages.hpp"
#include "engine/kernels.hpp"
#include "engine/names.hpp"
#include "engine/op.hpp"
#include "engine/op_store.hpp"

namespace clustersim::engine {

// Interns FLOP counts in a schedule's table (Schedule::flop_values): equal counts (equal bits, so
// 0.0 and -0.0 stay apart and every value reads back exactly) share one entry, entries appear in
// the order first seen. The table has at most one entry per op, so a 32-bit index always fits.
class FlopInterner {
 public:
  std::uint32_t intern(double flops, std::vector<double>& table);

 private:
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  std::uint64_t last_bits_ = 0;
  std::uint32_t last_ = kNone;  // intern()'s last result, kNone before the first
};

// An ordered list of ranks. The n-th collective a rank issues on a group matches the n-th
// collective every other member issues on it, as in NCCL.
struct ProcessGroup {
  std::vector<Rank> ranks;
  std::string name;  // e.g. "dp[3]", "tp[0]"
};

struct Schedule {
  std::uint32_t num_ranks = 0;
  // Folding (docs/performance.md "Folding"): mirror[r] is the simulated rank that rank r does
  // exactly what it does, at the same instants; empty when every rank is simulated. A mirrored
  // rank (mirror[r] != r) issues no ops. A collective starts when its simulated members have
  // arrived, and its plan still spans every member, so its cost is the full group's.
  std::vector<Rank> mirror;
  OpStore ops;             // ops of one rank appear in issue order; read by value (op_store.hpp)
  std::vector<OpId> deps;  // flat dependency lists, see Op::deps_begin
  std::vector<ProcessGroup> groups;
  std::vector<std::string> names;         // interned op names
  std::vector<std::string> stream_names;  // index = StreamId, e.g. "compute", "comm"
  KernelTable kernels;                    // the kernel lists compute ops name (Op::kernels)
  std::vector<double> flop_values;        // distinct FLOP counts of compute ops (Op::flop_index)
  // Per rank, the group on whose communicator its sends to and receives from the group's other
  // members are posted (kNone, or empty: none). A framework that batches its sends
  // (batch_isend_irecv) posts them on the group's communicator; a lone isend runs on one that
  // PyTorch makes for the two ranks (ProcessGroupNCCL::pointToPoint). NCCL gives a send more or
  // fewer p2p channels by which (docs/network.md "Sends: the communicator").
  std::vector<GroupId> send_comm;

  std::span<const OpId> dependencies(const Op& op) const {
    return {deps.data() + op.deps_begin, op.deps_count};
  }
  const std::string& name_of(const Op& op) const { return names[op.name]; }
  // A compute op's floating-point operations; 0 for other kinds.
  double flops(const Op& op) const {
    return op.kind == OpKind::compute ? flop_values[op.flop_index()] : 0.0;
  }
  bool simulated(Rank r) const { return mirror.empty() || mirror[r] == r; }
  // The group whose communicator a send from `src` to `dst` is posted on: both ranks' send_comm
  // when they share one, kNone (a communicator of the pair) otherwise.
  GroupId send_group(Rank src, Rank dst) const;
  // The same for a send or recv op (its pair in the right order); kNone for other ops.
  GroupId send_group(const Op& op) const;
  // Ranks that issue ops: num_ranks without folding.
  std::uint32_t simulated_ranks() const;
  // "L12.mlp fwd mb3": the op's name with its micro-batch, if any.
  std::string label(const Op& op) const;
};

// Builds a Schedule while enforcing the IR's invariants: dependencies point to earlier ops of the
// same rank (so every schedule is acyclic), groups hold distinct valid ranks.
class ScheduleBuilder {
 public:
  explicit ScheduleBuilder(std::uint32_t num_ranks);

  StreamId stream(std::string_view name);  // interns a stream name
  std::uint32_t intern(std::string_view name);
  GroupId add_group(std::vector<Rank> ranks, std::string name);
  // Sends and receives between members of `group` are posted on its communicator
  // (Schedule::send_comm). A rank posts its sends on one group at most: a second is an error.
  void post_sends_on(GroupId group);
  // Folds the schedule (Schedule::mirror): before any op is added; every entry must name a rank
  // that mirrors itself, and ops may then be added only on such ranks.
  void fold(std::vector<Rank> mirror);

  // Fields every op has. `name` is copied (interned) when the op is added; it must outlive only
  // that call.
  struct Common {
    Rank rank = 0;
    StreamId stream = 0;
    Category category = Category::forward;
    std::string_view name;
    std::uint32_t microbatch = kNone;
    std::span<const OpId> deps = {};
    std::uint32_t chunk = kNone;
  };
  // `kernels`: the op's kernel list, an index into kernel_table() (kNone: none; the compute model
  // then costs the op by its FLOPs and bytes).
  OpId compute(const Common& c, double flops, std::uint64_t bytes, std::uint8_t precision = 0,
               std::uint32_t kernels = kNone);
  OpId copy(const Common& c, std::uint64_t bytes, CopyDirection direction = CopyDirection::device);
  OpId collective(const Common& c, CollectiveType type, GroupId group, std::uint64_t bytes,
                  Algorithm algorithm = Algorithm::automatic, std::uint32_t root = 0);
  OpId send(const Common& c, Rank peer, std::uint64_t bytes, std::uint32_t tag);
  OpId recv(const Common& c, Rank peer, std::uint64_t bytes, std::uint32_t tag);

  // What a stamped copy of one rank's ops (stamp()) changes in each op.
  struct StampMap {
    Rank rank = 0;                          // the rank that issues the copies
    std::function<GroupId(GroupId)> group;  // a collective's group
    std::function<Rank(Rank)> peer;         // a send's or recv's peer
    std::function<OpId(OpId)> earlier;      // a dependency on an op before the copied range
  };
  // Appends a copy of ops [first, last), all issued by one rank, as the next ops of map.rank:
  // the same ops in the same order with the same fields, but the rank, a collective's group, a
  // send's or recv's peer and the dependencies, which map as `map` says (a dependency inside the
  // range on its copy). A construction shortcut for a rank that issues what another rank did
  // (a data-parallel replica): the copies read as ordinary ops, but where [first, last) were
  // built op by op they are held once (OpStore), their dependencies as ordinary lists. Returns
  // the first copy's id.
  OpId stamp(OpId first, OpId last, const StampMap& map);

  std::size_t size() const { return schedule_.ops.size(); }
  // Room for `ops` records (ops built one by one; stamped ones take none) and `deps` dependencies.
  void reserve(std::size_t ops, std::size_t deps) {
    schedule_.ops.reserve(ops);
    reserve_huge(schedule_.deps, deps);
  }
  const Schedule& peek() const { return schedule_; }
  // The op `rank` last issued on `stream`, kNone if none since the rank's ops began (ops are
  // built rank by rank): what an op on another stream waits for to follow that stream's work,
  // as a NCCL call waits for the work queued before it on the caller's stream.
  OpId last_on(Rank rank, StreamId stream) const;
  // Where plans intern the kernel lists their compute ops name.
  KernelTable& kernel_table() { return schedule_.kernels; }
  Schedule finish() &&;

 private:
  OpId push(const Common& c, Op op);
  std::pair<OpStore::Stamp, bool> stamp_deps(OpId first, OpId last, OpId base, const StampMap& map);

  // Transparent hashing: interning looks a name up without building a std::string.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Schedule schedule_;
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index_;
  std::uint32_t last_interned_ = kNone;  // intern()'s last result (kNone + 1 wraps to 0)
  FlopInterner flop_interner_;
};

}  // namespace clustersim::engine
