// What a trace reader read, op by op, put back together as a Schedule and a Timeline (the
// contract of engine/trace_reader.hpp). Shared by the Chrome JSON reader (engine/trace_reader.cpp)
// and the Perfetto protobuf reader (models/perfetto/perfetto_reader.cpp), which differ only in how
// they decode the file.
//
// Ops are stored in their final form as they arrive (about 90 bytes an op, plus 8 while ops come
// out of order), so a 15 M-op trace costs no more than the run it shows; only the rank count,
// the process groups and the stream ids wait for the end of the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/trace_reader.hpp"

namespace clustersim::engine {

// Ranks and streams a trace may name: far beyond any cluster simulated, small enough that a
// hostile pid cannot make a reader allocate gigabytes.
inline constexpr std::uint64_t kMaxTraceRanks = 1u << 20;
inline constexpr std::uint64_t kMaxTraceStreams = 1u << 16;

class TraceAssembly {
 public:
  // `source` names the trace in messages.
  explicit TraceAssembly(std::string source) : source_(std::move(source)) {}

  // One op as read. `name` comes from intern(); for a collective `group_or_peer` comes from
  // group(), for a send or recv it is the peer rank (checked in finish()). `tid` is the stream
  // as the file numbers it on this rank (a Chrome tid); `order` is the op's id in the schedule
  // written, when the file keeps it, else its place in the file.
  struct Read {
    std::uint64_t order = 0;
    Rank rank = 0;
    std::uint32_t tid = 0;
    std::uint32_t name = 0;
    Category category = Category::forward;
    OpKind kind = OpKind::compute;
    CollectiveType collective = CollectiveType::all_reduce;
    double flops = 0.0;
    std::uint64_t bytes = 0;
    std::uint32_t microbatch = kNone;
    std::uint32_t chunk = kNone;
    std::uint32_t group_or_peer = kNone;
    std::uint32_t tag = 0;
    std::uint32_t send_group = kNone;  // a send or recv: group() of its communicator, if any
    Time start = Time::zero();
    Time end = Time::zero();
    Algorithm algorithm = Algorithm::automatic;
    Protocol protocol = Protocol::simple;
    std::uint16_t channels = 0;
  };

  std::uint32_t intern(std::string_view name);
  const std::string& name(std::uint32_t interned) const { return names_.at(interned); }
  // A process group by its name (`dp[0]`): it holds the ranks whose collectives name it, and
  // those whose sends and recvs name it as their communicator (Schedule::send_comm).
  std::uint32_t group(std::string_view name);
  // Names stream `tid` of rank (process) `pid`; a stream an op uses unnamed is "stream TID".
  void name_stream(std::uint32_t pid, std::uint32_t tid, std::string_view name);
  // The pid of the "network" process, which is the number of ranks (ranks without ops count).
  void set_network_pid(std::uint32_t pid) { network_pid_ = pid; }

  // Adds an op; returns its index among the ops read (not its final id while they come out of
  // order).
  std::size_t add(const Read& op);
  // For a reader that meets an op's end after its start (Perfetto's slice end).
  void set_end(std::size_t index, Time end) { end_[index] = end; }
  Time start_of(std::size_t index) const { return start_[index]; }
  std::size_t size() const { return ops_.size(); }
  // A hint: the number of ops the file is expected to hold.
  void reserve(std::size_t ops);

  // The schedule (ops sorted by `order`, streams numbered by tid, groups' ranks sorted) and the
  // timeline (launch = start: a trace keeps no waiting). Throws TraceError naming the source for
  // what no schedule can hold (a send to its own rank, an op past the network process's pid).
  TraceContents finish() &&;

 private:
  std::uint32_t stream_key(Rank rank, std::uint32_t tid);
  void sort_by_order();
  void number_streams(Schedule& s);
  void check_peers(std::uint32_t ranks) const;

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Index = std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>>;

  std::string source_;
  std::vector<Op> ops_;              // Op::stream holds the op's tid until finish()
  std::vector<double> flop_values_;  // Schedule::flop_values, in the order read
  FlopInterner flop_interner_;
  std::vector<Time> start_, end_;
  std::vector<Algorithm> algorithm_;
  std::vector<Protocol> protocol_;
  std::vector<std::uint16_t> channels_;
  std::vector<std::uint64_t> order_;  // empty while every op's order is its index
  std::vector<std::string> names_;
  Index name_index_;
  std::vector<ProcessGroup> groups_;
  Index group_index_;
  std::unordered_map<Rank, std::uint32_t> send_comm_;  // rank -> the group its sends name
  // Each stream met, as (rank << 32 | tid) and its name, and the index of each in streams_.
  std::vector<std::pair<std::uint64_t, std::string>> streams_;
  std::unordered_map<std::uint64_t, std::uint32_t> stream_index_;
  std::uint64_t last_stream_ = ~std::uint64_t{0};
  std::uint32_t last_key_ = 0;
  std::uint32_t max_rank_plus_one_ = 0;
  std::optional<std::uint32_t> network_pid_;
};

}  // namespace clustersim::engine
