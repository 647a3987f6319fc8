#include "engine/trace_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <utility>
#include <vector>

#include "engine/network/transfer_plan.hpp"
#include "engine/trace_assembly.hpp"

namespace clustersim::engine {

namespace {

// The JSON type of a value.
enum class Type : std::uint8_t { object, array, string, number, boolean, null };

struct Number {
  double value = 0.0;
  // A non-negative integer written without fraction or exponent that fits 64 bits: `count` holds
  // it exactly (nlohmann's number_unsigned).
  bool is_count = false;
  std::uint64_t count = 0;
};

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
  Number number;
};

// The members of a trace event the reader uses; the others are skipped unread.
struct Event {
  Field name, cat, ph, ts, dur, pid, tid, args;
  // Members of args.
  Field op, kind, flops, bytes, microbatch, chunk, collective, group, algorithm, protocol, channels,
      to, from, tag, comm, args_name;

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
  static constexpr std::array<Member, 16> kArgs{{{"op", &Event::op},
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
                                                 {"comm", &Event::comm},
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
        return k == "kind"   ? &kind
               : k == "from" ? &from
               : k == "name" ? &args_name
               : k == "comm" ? &comm
                             : nullptr;
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

  // The event being read, which the SAX handler fills member by member.
  Event& event() { return e_; }

  [[noreturn]] void not_an_event(std::size_t index) {
    index_ = index;
    fail("", "expected an object (a trace event)");
  }

  // The event whose members event() holds ended.
  void element(std::size_t index) {
    index_ = index;
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
      r.channels =
          static_cast<std::uint16_t>(optional_count(e_.channels, "args.channels", 1u << 16, 0));
      if (e_.comm.present) r.send_group = assembly_.group(text(e_.comm, "args.comm"));
      r.algorithm = Algorithm::direct;  // what the simulator records for a send/recv
    }
  }

  const std::string& source_;
  TraceAssembly assembly_;
  Event e_;
  std::size_t index_ = 0;
};

// The stream read in large blocks, for nlohmann's istream input adapter: it takes a byte at a
// time with streambuf::sbumpc, inline while the block lasts, and the block is refilled by one
// istream::read (the caller's stream may have a small buffer, or none). Callgrind on 20 MB of
// a trace: 18 % fewer instructions for the parse (6 % for the whole read) than nlohmann's
// iterator adapter over the same blocks.
class BlockBuffer : public std::streambuf {
 public:
  BlockBuffer(std::istream& in, std::size_t block) : in_(in), buf_(block) {}

  // Bytes the parser has taken, for progress.
  std::uint64_t offset() const { return read_ - static_cast<std::uint64_t>(egptr() - gptr()); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!in_) return traits_type::eof();
    in_.read(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    const auto got = static_cast<std::size_t>(in_.gcount());
    read_ += got;
    setg(buf_.data(), buf_.data(), buf_.data() + got);
    return got > 0 ? traits_type::to_int_type(*gptr()) : traits_type::eof();
  }

 private:
  std::istream& in_;
  std::vector<char> buf_;
  std::uint64_t read_ = 0;
};

// nlohmann::json's SAX events (the nlohmann::json_sax<json> interface) turned straight into
// events' members: each member the reader uses is kept in its Field, the others (and anything
// nested where the reader wants none) are skipped as they pass, so no JSON value is built.
class TraceHandler {
 public:
  using json = nlohmann::json;

  TraceHandler(Reader& reader, const std::string& source, const TraceReadOptions& options,
               const BlockBuffer& input)
      : reader_(reader), source_(source), options_(options), input_(input) {}

  // The top-level value was not an object (a number, a string...).
  bool top_is_scalar() const { return top_is_scalar_; }
  bool has_events() const { return has_events_; }

  bool null() { return scalar(Type::null); }
  bool boolean(bool) { return scalar(Type::boolean); }
  bool number_integer(json::number_integer_t v) {
    return number(Number{static_cast<double>(v), false, 0});
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return number(Number{static_cast<double>(v), true, v});
  }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return number(Number{v, false, 0});
  }
  bool string(json::string_t& s) {
    if (Field* f = value(Type::string)) f->text.assign(s);
    return true;
  }
  bool binary(json::binary_t&) { return scalar(Type::null); }  // JSON text has none

  bool start_object(std::size_t) {
    if (skip_ > 0) return ++skip_, true;
    switch (level_) {
      case Level::top:
        level_ = Level::root;
        return true;
      case Level::events:
        clear_event();
        level_ = Level::event;
        return true;
      case Level::event:
        if (args_next_) {
          args_next_ = false;
          Event& e = reader_.event();
          e.clear(Event::kArgs);  // a second "args" replaces the first
          e.args.present = true;
          e.args.type = Type::object;
          level_ = Level::args;
          return true;
        }
        break;
      default:
        break;
    }
    value(Type::object);
    skip_ = 1;
    return true;
  }
  bool start_array(std::size_t) {
    if (skip_ > 0) return ++skip_, true;
    if (level_ == Level::top)
      throw TraceError(source_ + ": a JSON array; expected the object {\"traceEvents\": [...]}");
    if (level_ == Level::root && events_next_) {
      has_events_ = true;
      level_ = Level::events;
      return true;
    }
    value(Type::array);
    skip_ = 1;
    return true;
  }
  bool key(json::string_t& k) {
    if (skip_ > 0) return true;
    switch (level_) {
      case Level::root:
        events_next_ = k == "traceEvents";
        break;
      case Level::event:
        args_next_ = k == "args";
        field_ = args_next_ ? nullptr : reader_.event().member(k);
        break;
      case Level::args:
        field_ = reader_.event().arg(k);
        break;
      default:
        break;
    }
    return true;
  }
  bool end_object() {
    if (skip_ > 0) return --skip_, true;
    switch (level_) {
      case Level::args:
        level_ = Level::event;
        break;
      case Level::event:
        level_ = Level::events;
        reader_.element(index_++);
        if (options_.progress && index_ % 65'536 == 0) {
          const auto size = static_cast<double>(options_.size_bytes);
          options_.progress(size > 0 ? std::min(1.0, static_cast<double>(input_.offset()) / size)
                                     : -1.0);
        }
        break;
      default:  // the root
        level_ = Level::done;
        break;
    }
    return true;
  }
  bool end_array() {
    if (skip_ > 0) return --skip_, true;
    level_ = Level::root;  // the end of traceEvents
    return true;
  }

  // nlohmann's message, with the byte where the text goes wrong: "not valid JSON at byte 17:
  // line 1, column 17: syntax error while parsing value - unexpected end of input; ...".
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string_view what = e.what();
    if (what.starts_with('[')) {  // "[json.exception.parse_error.101] "
      const std::size_t close = what.find("] ");
      if (close != std::string_view::npos) what.remove_prefix(close + 2);
    }
    if (what.starts_with("parse error at ")) what.remove_prefix(15);
    throw TraceError(source_ + ": not valid JSON at byte " + std::to_string(position) + ": " +
                     std::string(what));
  }

 private:
  // Where the parser is: which containers the reader reads into are open.
  enum class Level : std::uint8_t { top, root, events, event, args, done };

  void clear_event() {
    Event& e = reader_.event();
    e.clear(Event::kMembers);
    e.clear(Event::kArgs);
    field_ = nullptr;
    args_next_ = false;
  }

  // A value starts (a scalar, or a container that is skipped): the Field it fills, if any.
  Field* value(Type type) {
    switch (level_) {
      case Level::top:
        top_is_scalar_ = true;
        level_ = Level::done;
        return nullptr;
      case Level::events:
        reader_.not_an_event(index_);
      case Level::event:
        if (args_next_) {  // "args" that is not an object
          args_next_ = false;
          Event& e = reader_.event();
          e.clear(Event::kArgs);
          e.args.present = true;
          e.args.type = type;
          return nullptr;
        }
        [[fallthrough]];
      case Level::args:
        if (field_ == nullptr) return nullptr;
        field_->present = true;
        field_->type = type;
        return std::exchange(field_, nullptr);
      default:
        return nullptr;
    }
  }
  bool scalar(Type type) {
    if (skip_ == 0) value(type);
    return true;
  }
  bool number(const Number& n) {
    if (skip_ > 0) return true;
    if (Field* f = value(Type::number)) f->number = n;
    return true;
  }

  Reader& reader_;
  const std::string& source_;
  const TraceReadOptions& options_;
  const BlockBuffer& input_;
  Level level_ = Level::top;
  std::size_t skip_ = 0;      // the depth inside a value skipped
  std::size_t index_ = 0;     // of the next element of traceEvents
  Field* field_ = nullptr;    // the member whose value comes next, if the reader uses it
  bool events_next_ = false;  // the root's member "traceEvents" comes next
  bool args_next_ = false;    // the event's member "args" comes next
  bool has_events_ = false;
  bool top_is_scalar_ = false;
};

// The bytes read at a time: a smaller file gets a block of its size.
constexpr std::uint64_t kBlock = std::uint64_t{4} << 20;

}  // namespace

TraceContents read_trace(std::istream& in, const std::string& source,
                         const TraceReadOptions& options) {
  Reader reader(source);
  if (options.size_bytes > 0)
    reader.assembly().reserve(std::min(options.size_bytes / kMinBytesPerOp, kMaxReserve));
  BlockBuffer buffer(in,
                     options.size_bytes > 0 ? std::min(options.size_bytes + 1, kBlock) : kBlock);
  std::istream blocks(&buffer);
  TraceHandler handler(reader, source, options, buffer);
  nlohmann::json::sax_parse(blocks, &handler);
  const std::string not_chrome = source + ": not a Chrome trace: expected {\"traceEvents\": [...]}";
  if (handler.top_is_scalar() || !handler.has_events()) throw TraceError(not_chrome);
  if (reader.assembly().size() == 0)
    throw TraceError(source + ": no ops (no \"ph\": \"X\" events); is it a clustersim trace?");
  TraceContents out = std::move(reader.assembly()).finish();
  if (options.progress) options.progress(1.0);
  return out;
}

}  // namespace clustersim::engine
