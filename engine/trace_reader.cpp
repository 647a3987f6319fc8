#include "engine/trace_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "engine/io/json_cursor.hpp"
#include "engine/network/transfer_plan.hpp"
#include "engine/trace_assembly.hpp"

namespace clustersim::engine {

namespace {

using Type = JsonCursor::Type;

// The simulated clock holds 64-bit picoseconds, about 9.2e12 us.
constexpr double kMaxMicros = 9.0e12;
// Bytes of JSON per op, at least, in a trace write_trace() wrote: the ops to make room for.
constexpr std::uint64_t kMinBytesPerOp = 150;
constexpr std::uint64_t kMaxReserve = std::uint64_t{1} << 25;

// A member of an event (or of its args) as read: its JSON type, and its text or number.
struct Field {
  bool present = false;
  Type type = Type::null;
  std::string text;
  JsonCursor::Number number;
};

// The members of a trace event the reader uses; the others are skipped unread.
struct Event {
  Field name, cat, ph, ts, dur, pid, tid, args;
  // Members of args.
  Field op, kind, flops, bytes, microbatch, chunk, collective, group, algorithm, protocol, channels,
      to, from, tag, args_name;

  // Every member, to forget them before the next event.
  using Member = std::pair<std::string_view, Field Event::*>;
  static constexpr std::array<Member, 8> kMembers{{{"name", &Event::name},
                                                   {"cat", &Event::cat},
                                                   {"ph", &Event::ph},
                                                   {"ts", &Event::ts},
                                                   {"dur", &Event::dur},
                                                   {"pid", &Event::pid},
                                                   {"tid", &Event::tid},
                                                   {"args", &Event::args}}};
  static constexpr std::array<Member, 15> kArgs{{{"op", &Event::op},
                                                 {"kind", &Event::kind},
                                                 {"flops", &Event::flops},
                                                 {"bytes", &Event::bytes},
                                                 {"microbatch", &Event::microbatch},
                                                 {"chunk", &Event::chunk},
                                                 {"collective", &Event::collective},
                                                 {"group", &Event::group},
                                                 {"algorithm", &Event::algorithm},
                                                 {"protocol", &Event::protocol},
                                                 {"channels", &Event::channels},
                                                 {"to", &Event::to},
                                                 {"from", &Event::from},
                                                 {"tag", &Event::tag},
                                                 {"name", &Event::args_name}}};

  // By length first: a key is compared once, with a constant-length comparison.
  Field* member(std::string_view k) {
    switch (k.size()) {
      case 2:
        return k == "ph" ? &ph : k == "ts" ? &ts : nullptr;
      case 3:
        return k == "cat"   ? &cat
               : k == "dur" ? &dur
               : k == "pid" ? &pid
               : k == "tid" ? &tid
                            : nullptr;
      case 4:
        return k == "name" ? &name : nullptr;
      default:
        return nullptr;
    }
  }
  Field* arg(std::string_view k) {
    switch (k.size()) {
      case 2:
        return k == "op" ? &op : k == "to" ? &to : nullptr;
      case 3:
        return k == "tag" ? &tag : nullptr;
      case 4:
        return k == "kind" ? &kind : k == "from" ? &from : k == "name" ? &args_name : nullptr;
      case 5:
        return k == "flops"   ? &flops
               : k == "bytes" ? &bytes
               : k == "chunk" ? &chunk
               : k == "group" ? &group
                              : nullptr;
      case 8:
        return k == "protocol" ? &protocol : k == "channels" ? &channels : nullptr;
      case 9:
        return k == "algorithm" ? &algorithm : nullptr;
      case 10:
        return k == "microbatch" ? &microbatch : k == "collective" ? &collective : nullptr;
      default:
        return nullptr;
    }
  }
  template <std::size_t N>
  void clear(const std::array<Member, N>& members) {
    for (const auto& [k, f] : members)
      (this->*f).present = false;
  }
};

void read_field(JsonCursor& json, Field& f) {
  f.present = true;
  f.type = json.peek();
  if (f.type == Type::string)
    f.text.assign(json.string());
  else if (f.type == Type::number)
    f.number = json.number();
  else
    json.skip();
}

void read_event(JsonCursor& json, Event& e) {
  e.clear(Event::kMembers);
  e.clear(Event::kArgs);
  json.begin_object();
  while (const auto key = json.next_key()) {
    if (*key != "args") {
      Field* f = e.member(*key);
      f != nullptr ? read_field(json, *f) : json.skip();
      continue;
    }
    e.clear(Event::kArgs);  // a second "args" replaces the first
    e.args.present = true;
    e.args.type = json.peek();
    if (e.args.type != Type::object) {
      json.skip();
      continue;
    }
    json.begin_object();
    while (const auto arg = json.next_key()) {
      Field* f = e.arg(*arg);
      f != nullptr ? read_field(json, *f) : json.skip();
    }
  }
}

std::int64_t picoseconds(double micros) {
  return static_cast<std::int64_t>(std::llround(micros * 1e6));
}

// The trace's name is Schedule::label(): the op's name and " mbN" when it has a micro-batch.
std::string_view strip_microbatch(std::string_view label, std::uint32_t microbatch) {
  if (microbatch == kNone) return label;
  char digits[16];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, microbatch);
  const std::string_view suffix(digits, static_cast<std::size_t>(end - digits));
  const std::size_t n = suffix.size() + 3;
  if (label.size() < n || !label.ends_with(suffix) || label.substr(label.size() - n, 3) != " mb")
    return label;
  return label.substr(0, label.size() - n);
}

// Turns the events of one file into ops; each error names the file and the event's JSON path.
class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source), assembly_(source) {}

  TraceAssembly& assembly() { return assembly_; }

  void element(JsonCursor& json, std::size_t index) {
    index_ = index;
    if (json.peek() != Type::object) fail("", "expected an object (a trace event)");
    read_event(json, e_);
    const std::string& ph = text(e_.ph, "ph");
    if (ph == "X")
      op();
    else if (ph == "M")
      metadata();
    // Flow arrows (s, f) and counters (C) draw nothing the timeline keeps.
  }

 private:
  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw TraceError(source_ + ": traceEvents[" + std::to_string(index_) + "]" +
                     (key.empty() ? "" : ".") + std::string(key) + ": " + std::string(what));
  }
  const Field& present(const Field& f, std::string_view key) const {
    if (!f.present) fail(key, "missing key");
    return f;
  }
  const std::string& text(const Field& f, std::string_view key) const {
    if (present(f, key).type != Type::string) fail(key, "expected a string");
    return f.text;
  }
  double number(const Field& f, std::string_view key) const {
    if (present(f, key).type != Type::number) fail(key, "expected a number");
    return f.number.value;
  }
  std::uint64_t count(const Field& f, std::string_view key) const {
    if (present(f, key).type != Type::number || !f.number.is_count)
      fail(key, "expected a non-negative integer");
    return f.number.count;
  }
  std::uint32_t count_below(const Field& f, std::string_view key, std::uint64_t limit) const {
    const std::uint64_t v = count(f, key);
    if (v >= limit) fail(key, "expected less than " + std::to_string(limit));
    return static_cast<std::uint32_t>(v);
  }
  std::uint32_t optional_count(const Field& f, std::string_view key, std::uint64_t limit,
                               std::uint32_t otherwise) const {
    return f.present ? count_below(f, key, limit) : otherwise;
  }
  template <typename E, std::size_t N>
  E parse_name(const NameTable<E, N>& table, const Field& f, std::string_view key) const {
    const std::string& name = text(f, key);
    const auto value = table.parse(name);
    if (!value) fail(key, "'" + name + "' is not one of " + table.allowed(", "));
    return *value;
  }

  void metadata() {
    const std::string& name = text(e_.name, "name");
    if (name != "process_name" && name != "thread_name") return;
    const auto pid = count_below(e_.pid, "pid", kMaxTraceRanks + 1);
    if (present(e_.args, "args").type != Type::object) fail("args", "expected an object");
    const std::string& value = text(e_.args_name, "args.name");
    if (name == "process_name") {
      if (value == "network") assembly_.set_network_pid(pid);
      return;
    }
    assembly_.name_stream(pid, optional_count(e_.tid, "tid", kMaxTraceStreams, 0), value);
  }

  void op() {
    TraceAssembly::Read r;
    r.order = index_;
    const std::string& label = text(e_.name, "name");
    r.category = parse_name(kCategoryNames, e_.cat, "cat");
    const double ts = number(e_.ts, "ts");
    const double dur = number(e_.dur, "dur");
    if (ts < 0 || ts > kMaxMicros) fail("ts", "expected a time in [0, 9e12] us");
    if (dur < 0 || ts + dur > kMaxMicros)
      fail("dur", "expected a duration >= 0 ending before 9e12 us");
    const std::int64_t start = picoseconds(ts);
    r.start = Time::from_ps(start);
    r.end = Time::from_ps(start + picoseconds(dur));
    r.rank = count_below(e_.pid, "pid", kMaxTraceRanks);
    r.tid = count_below(e_.tid, "tid", kMaxTraceStreams);
    if (e_.args.present) {
      if (e_.args.type != Type::object) fail("args", "expected an object");
      if (e_.op.present) r.order = count(e_.op, "args.op");
      if (e_.kind.present) r.kind = parse_name(kOpKindNames, e_.kind, "args.kind");
      if (e_.flops.present) r.flops = number(e_.flops, "args.flops");
      if (e_.bytes.present) r.bytes = count(e_.bytes, "args.bytes");
      r.microbatch = optional_count(e_.microbatch, "args.microbatch", kNone, kNone);
      r.chunk = optional_count(e_.chunk, "args.chunk", kNone, kNone);
      communication(r);
    }
    r.name = assembly_.intern(strip_microbatch(label, r.microbatch));
    assembly_.add(r);
  }

  // The arguments of a collective or a send/recv (docs/outputs.md).
  void communication(TraceAssembly::Read& r) {
    if (r.kind == OpKind::collective) {
      r.collective = parse_name(kCollectiveTypeNames, e_.collective, "args.collective");
      r.group_or_peer = assembly_.group(text(e_.group, "args.group"));
      if (e_.algorithm.present)
        r.algorithm = parse_name(kAlgorithmNames, e_.algorithm, "args.algorithm");
      if (e_.protocol.present)
        r.protocol = parse_name(kProtocolNames, e_.protocol, "args.protocol");
      r.channels =
          static_cast<std::uint16_t>(optional_count(e_.channels, "args.channels", 1u << 16, 0));
    } else if (r.kind == OpKind::send || r.kind == OpKind::recv) {
      const bool send = r.kind == OpKind::send;
      r.group_or_peer =
          count_below(send ? e_.to : e_.from, send ? "args.to" : "args.from", kMaxTraceRanks);
      r.tag = optional_count(e_.tag, "args.tag", kNone, 0);
      r.algorithm = Algorithm::direct;  // what the simulator records for a send/recv
    }
  }

  const std::string& source_;
  TraceAssembly assembly_;
  Event e_;
  std::size_t index_ = 0;
};

}  // namespace

TraceContents read_trace(std::istream& in, const std::string& source,
                         const TraceReadOptions& options) {
  Reader reader(source);
  if (options.size_bytes > 0)
    reader.assembly().reserve(std::min(options.size_bytes / kMinBytesPerOp, kMaxReserve));
  const std::string not_chrome = source + ": not a Chrome trace: expected {\"traceEvents\": [...]}";
  try {
    // A file smaller than the cursor's buffer gets a buffer of its size.
    JsonCursor json(in, options.size_bytes > 0 ? std::min<std::uint64_t>(options.size_bytes + 1,
                                                                         std::uint64_t{1} << 20)
                                               : std::size_t{1} << 20);
    const Type top = json.peek();
    if (top == Type::array)
      throw TraceError(source + ": a JSON array; expected the object {\"traceEvents\": [...]}");
    if (top != Type::object) {
      json.skip();
      json.end();
      throw TraceError(not_chrome);
    }
    bool has_events = false;
    std::size_t index = 0;  // of the next element of traceEvents
    json.begin_object();
    while (const auto key = json.next_key()) {
      if (*key != "traceEvents" || json.peek() != Type::array) {
        json.skip();
        continue;
      }
      has_events = true;
      json.begin_array();
      while (json.next_element()) {
        reader.element(json, index++);
        if (options.progress && index % 65'536 == 0) {
          const auto size = static_cast<double>(options.size_bytes);
          options.progress(size > 0 ? std::min(1.0, static_cast<double>(json.offset()) / size)
                                    : -1.0);
        }
      }
    }
    json.end();
    if (!has_events) throw TraceError(not_chrome);
  } catch (const JsonSyntaxError& e) {
    throw TraceError(source + ": not valid JSON: " + e.what());
  }
  if (reader.assembly().size() == 0)
    throw TraceError(source + ": no ops (no \"ph\": \"X\" events); is it a clustersim trace?");
  TraceContents out = std::move(reader.assembly()).finish();
  if (options.progress) options.progress(1.0);
  return out;
}

}  // namespace clustersim::engine
