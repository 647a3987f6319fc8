#include "engine/trace_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/calibration/json_fields.hpp"
#include "engine/network/transfer_plan.hpp"

namespace clustersim::engine {

namespace {

using nlohmann::json;

// Ranks and streams a trace may name: far beyond any cluster simulated, small enough that a
// hostile pid cannot make the reader allocate gigabytes.
constexpr std::uint64_t kMaxRanks = 1u << 20;
constexpr std::uint64_t kMaxStreams = 1u << 16;
// The simulated clock holds 64-bit picoseconds, about 9.2e12 us.
constexpr double kMaxMicros = 9.0e12;

// One X event, kept until every event is read: groups and the rank count are only known then.
struct Record {
  std::uint64_t order = 0;  // args.op, the op's id in the schedule written; else file order
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
  double flops = 0.0;
  std::uint64_t bytes = 0;
  std::uint32_t rank = 0;
  std::uint32_t name = 0;  // into Reader::names_
  std::uint32_t microbatch = kNone;
  std::uint32_t chunk = kNone;
  std::uint32_t group_or_peer = kNone;  // a group index into Reader::groups_, or the peer
  std::uint32_t tag = 0;
  std::uint16_t tid = 0;
  std::uint16_t channels = 0;
  OpKind kind = OpKind::compute;
  Category category = Category::forward;
  CollectiveType collective = CollectiveType::all_reduce;
  Algorithm algorithm = Algorithm::automatic;
  Protocol protocol = Protocol::simple;
};

std::int64_t picoseconds(double micros) {
  return static_cast<std::int64_t>(std::llround(micros * 1e6));
}

template <typename E, std::size_t N>
E parse_name(const NameTable<E, N>& table, const json& obj, std::string_view key,
             const JsonPath& at) {
  const std::string name = require_string(obj, key, at);
  const auto value = table.parse(name);
  if (!value) at.key(key).fail("'" + name + "' is not one of " + table.allowed(", "));
  return *value;
}

std::uint32_t count_below(const json& obj, std::string_view key, const JsonPath& at,
                          std::uint64_t limit) {
  const std::uint64_t v = require_count(obj, key, at);
  if (v >= limit) at.key(key).fail("expected less than " + std::to_string(limit));
  return static_cast<std::uint32_t>(v);
}

std::uint32_t optional_count(const json& obj, std::string_view key, const JsonPath& at,
                             std::uint64_t limit, std::uint32_t otherwise) {
  return obj.contains(key) ? count_below(obj, key, at, limit) : otherwise;
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  // One element of traceEvents.
  void event(const json& e, std::size_t index) {
    const JsonPath at(source_, "traceEvents[" + std::to_string(index) + "]");
    if (!e.is_object()) at.fail("expected an object (a trace event)");
    const std::string ph = require_string(e, "ph", at);
    if (ph == "X") {
      op(e, index, at);
    } else if (ph == "M") {
      metadata(e, at);
    }
    // Flow arrows (s, f) and counters (C) draw nothing the timeline keeps.
  }

  TraceContents finish() {
    if (records_.empty())
      throw TraceError(source_ + ": no ops (no \"ph\": \"X\" events); is it a clustersim trace?");
    std::uint64_t ranks = 0;
    for (const Record& r : records_)
      ranks = std::max<std::uint64_t>(ranks, r.rank + 1ull);
    if (network_pid_) {
      if (*network_pid_ < ranks)
        throw TraceError(source_ + ": an op on pid " + std::to_string(ranks - 1) +
                         ", which is not below the \"network\" process's pid " +
                         std::to_string(*network_pid_) + " (pids 0..N-1 are the ranks)");
      ranks = *network_pid_;  // ranks without ops (folded, filtered out) still count
    }
    std::stable_sort(records_.begin(), records_.end(),
                     [](const Record& a, const Record& b) { return a.order < b.order; });
    try {
      return build(static_cast<std::uint32_t>(ranks));
    } catch (const std::invalid_argument& e) {  // the schedule's invariants
      throw TraceError(source_ + ": " + e.what());
    }
  }

 private:
  void metadata(const json& e, const JsonPath& at) {
    const std::string name = require_string(e, "name", at);
    if (name != "process_name" && name != "thread_name") return;
    const auto pid = count_below(e, "pid", at, kMaxRanks + 1);
    const std::string value = require_string(require(e, "args", at), "name", at.key("args"));
    if (name == "process_name") {
      if (value == "network") network_pid_ = pid;
      return;
    }
    const auto tid = optional_count(e, "tid", at, kMaxStreams, 0);
    stream_names_[{pid, tid}] = value;
  }

  void op(const json& e, std::size_t index, const JsonPath& at) {
    Record r;
    r.order = index;
    const std::string label = require_string(e, "name", at);
    r.category = parse_name(kCategoryNames, e, "cat", at);
    const double ts = require_number(e, "ts", at);
    const double dur = require_number(e, "dur", at);
    if (ts < 0 || ts > kMaxMicros) at.key("ts").fail("expected a time in [0, 9e12] us");
    if (dur < 0 || ts + dur > kMaxMicros)
      at.key("dur").fail("expected a duration >= 0 ending before 9e12 us");
    r.start_ps = picoseconds(ts);
    r.end_ps = r.start_ps + picoseconds(dur);
    r.rank = count_below(e, "pid", at, kMaxRanks);
    r.tid = static_cast<std::uint16_t>(count_below(e, "tid", at, kMaxStreams));
    if (const auto key = std::pair<std::uint32_t, std::uint32_t>{r.rank, r.tid};
        !stream_names_.contains(key))
      stream_names_.emplace(key, "stream " + std::to_string(r.tid));  // until a thread_name

    if (const auto it = e.find("args"); it != e.end()) {
      const JsonPath in = at.key("args");
      const json& args = *it;
      if (!args.is_object()) in.fail("expected an object");
      if (args.contains("op")) r.order = require_count(args, "op", in);
      if (args.contains("kind")) r.kind = parse_name(kOpKindNames, args, "kind", in);
      if (args.contains("flops")) r.flops = require_number(args, "flops", in);
      if (args.contains("bytes")) r.bytes = require_count(args, "bytes", in);
      r.microbatch = optional_count(args, "microbatch", in, kNone, kNone);
      r.chunk = optional_count(args, "chunk", in, kNone, kNone);
      communication(args, r, in);
    }
    r.name = intern(strip_microbatch(label, r.microbatch));
    records_.push_back(r);
  }

  // The arguments of a collective or a send/recv (docs/outputs.md).
  void communication(const json& args, Record& r, const JsonPath& in) {
    if (r.kind == OpKind::collective) {
      r.collective = parse_name(kCollectiveTypeNames, args, "collective", in);
      const std::string group = require_string(args, "group", in);
      const auto [it, added] = group_index_.try_emplace(group, groups_.size());
      if (added) groups_.push_back({{}, group});
      groups_[it->second].ranks.push_back(r.rank);
      r.group_or_peer = static_cast<std::uint32_t>(it->second);
      if (args.contains("algorithm"))
        r.algorithm = parse_name(kAlgorithmNames, args, "algorithm", in);
      if (args.contains("protocol")) r.protocol = parse_name(kProtocolNames, args, "protocol", in);
      r.channels = static_cast<std::uint16_t>(optional_count(args, "channels", in, 1u << 16, 0));
    } else if (r.kind == OpKind::send || r.kind == OpKind::recv) {
      const bool send = r.kind == OpKind::send;
      r.group_or_peer = optional_count(args, send ? "to" : "from", in, kMaxRanks, kNone);
      if (r.group_or_peer == kNone) in.key(send ? "to" : "from").fail("missing key");
      r.tag = optional_count(args, "tag", in, kNone, 0);
      r.algorithm = Algorithm::direct;  // what the simulator records for a send/recv
    }
  }

  // The trace's name is Schedule::label(): the op's name and " mbN" when it has a micro-batch.
  static std::string_view strip_microbatch(std::string_view label, std::uint32_t microbatch) {
    if (microbatch == kNone) return label;
    const std::string suffix = " mb" + std::to_string(microbatch);
    return label.ends_with(suffix) ? label.substr(0, label.size() - suffix.size()) : label;
  }

  std::uint32_t intern(std::string_view name) {
    const auto [it, added] =
        name_index_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
    if (added) names_.emplace_back(name);
    return it->second;
  }

  TraceContents build(std::uint32_t ranks) {
    ScheduleBuilder b(ranks);
    // Streams interned in increasing tid, so a clustersim trace gets its stream ids back.
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, const std::string*>> keys;
    for (const auto& [key, name] : stream_names_)
      keys.push_back({{key.second, key.first}, &name});
    std::sort(keys.begin(), keys.end());
    std::map<std::pair<std::uint32_t, std::uint32_t>, StreamId> stream_of;  // (pid, tid)
    for (const auto& [tid_pid, name] : keys) {
      // StreamId is 16 bits: a trace naming more streams cannot be held (nor drawn usefully).
      if (b.peek().stream_names.size() == kMaxStreams &&
          std::find(b.peek().stream_names.begin(), b.peek().stream_names.end(), *name) ==
              b.peek().stream_names.end())
        throw TraceError(source_ + ": more than " + std::to_string(kMaxStreams) +
                         " distinct stream (thread) names");
      stream_of[{tid_pid.second, tid_pid.first}] = b.stream(*name);
    }
    for (ProcessGroup& g : groups_) {
      std::sort(g.ranks.begin(), g.ranks.end());
      g.ranks.erase(std::unique(g.ranks.begin(), g.ranks.end()), g.ranks.end());
      b.add_group(std::move(g.ranks), g.name);
    }
    b.reserve(records_.size(), 0);
    TraceContents out;
    Timeline& tl = out.timeline;
    const std::size_t n = records_.size();
    tl.start.reserve(n);
    tl.end.reserve(n);
    tl.algorithm.reserve(n);
    tl.protocol.reserve(n);
    tl.channels.reserve(n);
    Time makespan = Time::zero();
    for (const Record& r : records_) {
      const ScheduleBuilder::Common c{.rank = r.rank,
                                      .stream = stream_of.at({r.rank, r.tid}),
                                      .category = r.category,
                                      .name = names_[r.name],
                                      .microbatch = r.microbatch,
                                      .chunk = r.chunk};
      switch (r.kind) {
        case OpKind::compute:
          b.compute(c, r.flops, r.bytes);
          break;
        case OpKind::copy:
          b.copy(c, r.bytes);
          break;
        case OpKind::collective:
          // The algorithm asked for is not in the trace; the one the run chose is (timeline).
          b.collective(c, r.collective, r.group_or_peer, r.bytes);
          break;
        case OpKind::send:
          b.send(c, r.group_or_peer, r.bytes, r.tag);
          break;
        case OpKind::recv:
          b.recv(c, r.group_or_peer, r.bytes, r.tag);
          break;
      }
      tl.start.push_back(Time::from_ps(r.start_ps));
      tl.end.push_back(Time::from_ps(r.end_ps));
      tl.algorithm.push_back(r.algorithm);
      tl.protocol.push_back(r.protocol);
      tl.channels.push_back(r.channels);
      makespan = std::max(makespan, tl.end.back());
    }
    records_ = {};
    tl.launch = tl.start;
    tl.makespan = makespan;
    out.schedule = std::move(b).finish();
    return out;
  }

  std::string source_;
  std::vector<Record> records_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::vector<ProcessGroup> groups_;
  std::unordered_map<std::string, std::size_t> group_index_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> stream_names_;  // (pid, tid)
  std::optional<std::uint32_t> network_pid_;
};

}  // namespace

TraceContents read_trace(std::istream& in, const std::string& source,
                         const TraceReadOptions& options) {
  Reader reader(source);
  std::string top_key;      // the top-level key being read
  bool in_events = false;   // inside the traceEvents array
  bool has_events = false;  // it was there
  std::size_t index = 0;    // of the next element of traceEvents
  // Events are handled as each one closes and then dropped (the callback returns false), so the
  // document never holds more than one.
  const json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (depth == 0 && event == E::array_start)
      throw TraceError(source + ": a JSON array; expected the object {\"traceEvents\": [...]}");
    if (depth == 1 && event == E::key) {
      top_key = parsed.get<std::string>();
      in_events = false;
    }
    if (depth == 1 && event == E::array_start && top_key == "traceEvents")
      in_events = has_events = true;
    if (depth != 2 || !in_events) return true;
    if (event == E::value || event == E::array_end)  // an element that is not an object
      reader.event(parsed, index++);
    if (event != E::object_end) return true;
    reader.event(parsed, index++);
    if (options.progress && index % 65'536 == 0) {
      const auto at = static_cast<double>(in.tellg());
      const auto size = static_cast<double>(options.size_bytes);
      options.progress(size > 0 && at >= 0 ? std::min(1.0, at / size) : -1.0);
    }
    return false;
  };
  try {
    const json top = json::parse(in, callback);
    if (!top.is_object() || !has_events)
      throw TraceError(source + ": not a Chrome trace: expected {\"traceEvents\": [...]}");
  } catch (const json::exception& e) {  // a syntax error, or a number past a double (1e400)
    throw TraceError(source + ": not valid JSON: " + e.what());
  } catch (const ProfileError& e) {  // the JSON helpers' message: file, path and what is wrong
    throw TraceError(e.what());
  }
  TraceContents out = reader.finish();
  if (options.progress) options.progress(1.0);
  return out;
}

}  // namespace clustersim::engine
