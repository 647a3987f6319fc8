#include "models/perfetto/perfetto_reader.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/trace_assembly.hpp"
#include "models/perfetto/trace_framing.hpp"
#include "perfetto_trace.pb.h"

namespace clustersim::models {

namespace {

namespace pb = perfetto::protos;
using engine::TraceError;
using google::protobuf::io::CodedInputStream;

using perfetto_framing::kPacketTag;
// The writer's packets are tens of bytes and its compressed bundles under 1 MiB; a packet past
// this is not a clustersim trace's.
constexpr std::uint32_t kMaxPacket = 16u << 20;
// An inflated bundle past this is refused (the writer's hold 1 MiB).
constexpr std::size_t kMaxBundle = std::size_t{256} << 20;
// Bundles inflating ahead of the one being parsed: one keeps a second core busy.
constexpr std::size_t kBundlesAhead = 1;
// CodedInputStream stops at 2 GiB; a fresh one takes over every GiB.
constexpr int kRenewAfter = 1 << 30;
// Bytes of file per op, at least (a begin and an end packet): the ops to make room for.
constexpr std::uint64_t kMinBytesPerOp = 24;
// The same in compressed bundles (GPT-3 1,024 GPUs: 11 bytes an op).
constexpr std::uint64_t kMinCompressedBytesPerOp = 8;
constexpr std::uint64_t kMaxReserve = std::uint64_t{1} << 25;
// Nanoseconds the simulated clock (64-bit picoseconds) holds.
constexpr std::uint64_t kMaxNs = std::numeric_limits<std::int64_t>::max() / 1000;

// uuids and iids are counters in clustersim's traces (lane uuids start after one per rank): a
// vector holds them from the first id set while they stay dense, a map any other (a hostile id of
// 4e9 costs a map entry, not gigabytes).
template <typename T>
class IdMap {
 public:
  T* find(std::uint64_t id) {
    if (id >= base_ && id - base_ < dense_.size() && dense_[id - base_])
      return &*dense_[id - base_];
    const auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  T& set(std::uint64_t id, T value) {
    if (dense_.empty() && sparse_.empty()) base_ = id;
    const std::uint64_t i = id - base_;
    if (id >= base_ && (i < dense_.size() || i <= 2 * dense_count_ + kSlack)) {
      if (i >= dense_.size()) dense_.resize(i + 1);
      if (!dense_[i]) ++dense_count_;
      sparse_.erase(id);
      return *(dense_[i] = std::move(value));
    }
    return sparse_.insert_or_assign(id, std::move(value)).first->second;
  }
  void clear() {
    dense_.clear();
    sparse_.clear();
    dense_count_ = 0;
  }

 private:
  // Ids up to twice the count held, plus this, past the first stay dense.
  static constexpr std::uint64_t kSlack = 1024;
  std::uint64_t base_ = 0;
  std::vector<std::optional<T>> dense_;
  std::uint64_t dense_count_ = 0;
  std::unordered_map<std::uint64_t, T> sparse_;
};

// An interned category, and what it says once an op used it.
struct Category {
  explicit Category(std::string name) : text(std::move(name)) {}
  std::string text;
  bool parsed = false;
  engine::Category category = engine::Category::forward;
  engine::OpKind kind = engine::OpKind::compute;
  engine::CollectiveType collective = engine::CollectiveType::all_reduce;
  std::uint32_t group_or_peer = engine::kNone;  // a group as the assembly numbers it, or a rank
  std::uint32_t send_group = engine::kNone;     // a send's or recv's communicator, if a group's
};

// A stream's track: its rank and stream (numbered per rank in file order), and its open slices.
struct Lane {
  engine::Rank rank = 0;
  std::uint32_t tid = 0;
  std::vector<std::size_t> open;
};

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source), assembly_(source) {}

  engine::TraceAssembly& assembly() { return assembly_; }

  void packet(const pb::TracePacket& p) {
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      names_.clear();
      categories_.clear();
    }
    if (p.has_interned_data()) {
      for (const pb::EventName& n : p.interned_data().event_names())
        names_.set(n.iid(), assembly_.intern(n.name()));
      for (const pb::EventCategory& c : p.interned_data().event_categories())
        categories_.set(c.iid(), Category(c.name()));
    }
    if (p.has_track_descriptor()) descriptor(p.track_descriptor());
    if (p.has_track_event()) event(p.timestamp(), p.track_event());
  }

  // What is left open when the file ends.
  void finish() {
    std::size_t open = 0;
    for (const std::uint64_t uuid : lane_uuids_)
      open += lanes_.find(uuid)->open.size();
    if (assembly_.size() == 0) fail("no slices (ops); is it a trace clustersim wrote?");
    if (open > 0) fail(std::to_string(open) + " slices begin and never end: the file is cut short");
    if (!network_)
      fail(
          "the file ends before the network process, which clustersim writes after the last "
          "slice: it is cut short");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw TraceError(source_ + ": " + what); }

  void descriptor(const pb::TrackDescriptor& d) {
    if (d.has_process()) {
      const std::int32_t pid = d.process().pid();
      if (d.process().process_name() == "network") {
        if (pid < 0 || static_cast<std::uint64_t>(pid) > engine::kMaxTraceRanks)
          fail("the network process has pid " + std::to_string(pid) +
               ", which should be the rank count, at most " +
               std::to_string(engine::kMaxTraceRanks));
        assembly_.set_network_pid(static_cast<std::uint32_t>(pid));
        network_ = true;
        return;
      }
      if (pid < 0 || static_cast<std::uint64_t>(pid) >= engine::kMaxTraceRanks)
        fail("process '" + d.process().process_name() + "' has pid " + std::to_string(pid) +
             ": a rank's pid is in [0, " + std::to_string(engine::kMaxTraceRanks) + ")");
      processes_.set(d.uuid(), {static_cast<engine::Rank>(pid), 0});
      return;
    }
    if (d.has_counter() || !d.has_parent_uuid()) return;  // counters draw no op
    if (lanes_.find(d.uuid()) != nullptr) return;         // declared again
    Process* parent = processes_.find(d.parent_uuid());
    if (parent == nullptr) return;  // under the network process, or no process of ours
    Lane& lane = lanes_.set(d.uuid(), {parent->rank, parent->streams++, {}});
    if (lane.tid >= engine::kMaxTraceStreams)
      fail("rank " + std::to_string(lane.rank) + " has more than " +
           std::to_string(engine::kMaxTraceStreams) + " streams");
    assembly_.name_stream(lane.rank, lane.tid, d.name());
    lane_uuids_.push_back(d.uuid());
  }

  void event(std::uint64_t ns, const pb::TrackEvent& e) {
    const bool begin = e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN;
    if (!begin && e.type() != pb::TrackEvent::TYPE_SLICE_END) return;  // counters, instants
    Lane* lane = lanes_.find(e.track_uuid());
    if (lane == nullptr)
      fail(std::string(begin ? "a slice begins" : "a slice ends") + " on track " +
           std::to_string(e.track_uuid()) +
           ", which no track descriptor before it declares as a rank's stream");
    if (ns > kMaxNs) fail("a slice at " + std::to_string(ns) + " ns, past the simulated clock");
    const auto t = engine::Time::from_ps(static_cast<std::int64_t>(ns) * 1000);
    if (begin) {
      lane->open.push_back(slice(*lane, t, e));
      return;
    }
    if (lane->open.empty())
      fail("a slice ends on rank " + std::to_string(lane->rank) + "'s stream " +
           std::to_string(lane->tid) + " where none began");
    const std::size_t op = lane->open.back();
    lane->open.pop_back();
    if (t < assembly_.start_of(op))
      fail("a slice of rank " + std::to_string(lane->rank) + " ends at " + std::to_string(ns) +
           " ns, before it began");
    assembly_.set_end(op, t);
  }

  std::size_t slice(const Lane& lane, engine::Time t, const pb::TrackEvent& e) {
    engine::TraceAssembly::Read r;
    r.order = assembly_.size();
    r.rank = lane.rank;
    r.tid = lane.tid;
    r.start = r.end = t;
    const std::uint32_t* name = names_.find(e.name_iid());
    if (name == nullptr)
      fail("a slice of rank " + std::to_string(lane.rank) + " names event name " +
           std::to_string(e.name_iid()) + ", which no packet before it interned");
    r.name = *name;
    if (e.category_iids_size() == 0)
      fail("slice '" + assembly_name(*name) +
           "' has no category: not a clustersim trace, or one written before clustersim kept "
           "categories in .pftrace files (write it again)");
    const Category& c = category(e.category_iids(0), *name);
    r.category = c.category;
    r.kind = c.kind;
    r.collective = c.collective;
    r.group_or_peer = c.group_or_peer;
    r.send_group = c.send_group;
    if (r.kind == engine::OpKind::send || r.kind == engine::OpKind::recv) {
      r.algorithm = engine::Algorithm::direct;  // what the simulator records for a send/recv
      // A send and its recv share an arrow (a flow id): it pairs them as a tag would.
      const auto& flows = r.kind == engine::OpKind::send ? e.flow_ids() : e.terminating_flow_ids();
      if (!flows.empty()) r.tag = static_cast<std::uint32_t>(flows[0]);
    }
    return assembly_.add(r);
  }

  const std::string& assembly_name(std::uint32_t name) const { return assembly_.name(name); }

  // The op's category as the writer interned it, read the first time an op uses it:
  // "forward,compute", "tp-comm,all_reduce,tp[3]" (a collective's type, then its group),
  // "pp-comm,send,to 9" (a send's or recv's peer).
  const Category& category(std::uint64_t iid, std::uint32_t name) {
    Category* c = categories_.find(iid);
    if (c == nullptr)
      fail("slice '" + assembly_name(name) + "' names category " + std::to_string(iid) +
           ", which no packet before it interned");
    if (!c->parsed) parse(*c, name);
    return *c;
  }

  void parse(Category& c, std::uint32_t name) {
    const std::string_view text = c.text;
    const std::size_t first = text.find(',');
    const std::size_t second = text.find(',', first == text.npos ? first : first + 1);
    const std::string_view kind_text =
        first == text.npos
            ? ""
            : text.substr(first + 1, second == text.npos ? second : second - first - 1);
    const std::string_view rest = second == text.npos ? "" : text.substr(second + 1);
    const auto category = engine::kCategoryNames.parse(text.substr(0, first));
    const auto kind = engine::kOpKindNames.parse(kind_text);
    const auto collective = engine::kCollectiveTypeNames.parse(kind_text);
    const bool p2p = kind == engine::OpKind::send || kind == engine::OpKind::recv;
    const bool ok = category && (kind || collective) && kind != engine::OpKind::collective &&
                    (collective || p2p ? !rest.empty() : second == text.npos);
    if (!ok)
      fail("slice '" + assembly_name(name) + "' has category '" + c.text +
           "', which is not a clustersim op's: its category, kind (or collective type), and a "
           "collective's group or a send's or recv's peer ('forward,compute', "
           "'tp-comm,all_reduce,tp[3]', 'pp-comm,send,to 9')");
    c.category = *category;
    c.kind = kind ? *kind : engine::OpKind::collective;
    if (collective) {
      c.collective = *collective;
      c.group_or_peer = assembly_.group(rest);
    } else if (p2p) {
      // "to 9", or "to 9,pp[0]" when it was posted on a group's communicator.
      const std::size_t comma = rest.find(',');
      c.group_or_peer =
          peer(rest.substr(0, comma), kind == engine::OpKind::send ? "to " : "from ", c.text, name);
      if (comma != rest.npos) c.send_group = assembly_.group(rest.substr(comma + 1));
    }
    c.parsed = true;
  }

  engine::Rank peer(std::string_view text, std::string_view prefix, const std::string& category,
                    std::uint32_t name) const {
    engine::Rank rank = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] =
        std::from_chars(text.data() + std::min(prefix.size(), text.size()), end, rank);
    if (!text.starts_with(prefix) || ec != std::errc() || p != end ||
        rank >= engine::kMaxTraceRanks)
      fail("slice '" + assembly_name(name) + "' has category '" + category +
           "', whose peer is not '" + std::string(prefix) + "R' with R a rank");
    return rank;
  }

  struct Process {
    engine::Rank rank = 0;
    std::uint32_t streams = 0;
  };

  const std::string& source_;
  engine::TraceAssembly assembly_;
  IdMap<std::uint32_t> names_;  // interned event name -> the assembly's name
  IdMap<Category> categories_;
  IdMap<Process> processes_;
  IdMap<Lane> lanes_;
  std::vector<std::uint64_t> lane_uuids_;
  bool network_ = false;
};

// Reads a packet's tag and length; the stream stands at its body after it.
std::uint32_t packet_length(CodedInputStream& coded, std::uint32_t tag, const std::string& what,
                            const std::function<void(const std::string&)>& fail) {
  if (tag != kPacketTag)
    fail("field " + std::to_string(tag >> 3) + " (wire type " + std::to_string(tag & 7) +
         "): not a Perfetto trace, which holds only packets (field 1)");
  std::uint32_t length = 0;
  if (!coded.ReadVarint32(&length)) fail(what + " is cut short");
  if (length > kMaxPacket)
    fail(what + " is " + std::to_string(length) +
         " bytes long; clustersim writes packets of less than 1 KiB and bundles of about 1 MiB");
  return length;
}

// The packets of an inflated bundle, each as if it stood in the file.
void read_bundle(const std::string& bundle, Reader& reader, pb::TracePacket& packet,
                 const std::function<void(std::uint64_t, const std::string&)>& fail) {
  CodedInputStream coded(reinterpret_cast<const std::uint8_t*>(bundle.data()),
                         static_cast<int>(bundle.size()));
  for (std::uint64_t n = 0;; ++n) {
    const auto at = static_cast<std::uint64_t>(coded.CurrentPosition());
    const std::uint32_t tag = coded.ReadTag();
    if (tag == 0) {
      if (coded.ConsumedEntireMessage()) return;
      fail(at, "not a protobuf message (no field starts here)");
    }
    const std::string what = "packet " + std::to_string(n);
    const std::uint32_t length =
        packet_length(coded, tag, what, [&](const std::string& e) { fail(at, e); });
    const auto limit = coded.PushLimit(static_cast<int>(length));
    if (!packet.ParseFromCodedStream(&coded) || coded.BytesUntilLimit() != 0)
      fail(at, what + " is not a valid TracePacket (or the bundle is cut short)");
    coded.PopLimit(limit);
    if (packet.has_compressed_packets())
      fail(
          at,
          what + " is a compressed bundle inside a compressed bundle, which Perfetto never writes");
    reader.packet(packet);
  }
}

// Inflates one compressed bundle (zlib or gzip framing) into `out`, refusing one that grows past
// kMaxBundle: a hostile few kilobytes must not become gigabytes.
std::string inflate_bundle(const std::string& compressed,
                           const std::function<void(const std::string&)>& fail) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) fail("zlib could not start inflating a compressed bundle");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (out.size() >= kMaxBundle) break;
    const std::size_t at = out.size();
    out.resize(std::min(kMaxBundle, std::max<std::size_t>(2 * at, 1u << 16)));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    z.avail_out = static_cast<uInt>(out.size() - at);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input ran out before the stream ended
    if (rc == Z_BUF_ERROR) rc = Z_OK;                  // only the output was full
  }
  const bool ended = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!ended)
    fail(out.size() >= kMaxBundle && rc == Z_OK
             ? "a compressed bundle inflates past " + std::to_string(kMaxBundle >> 20) +
                   " MiB; clustersim writes bundles of about 1 MiB"
             : "a compressed bundle is not a whole zlib stream (the file is damaged or cut short)");
  return out;
}

}  // namespace

engine::TraceContents read_perfetto_trace(std::istream& in, const std::string& source,
                                          const engine::TraceReadOptions& options) {
  Reader reader(source);
  const std::uint64_t size = options.size_bytes;
  google::protobuf::io::IstreamInputStream file(&in, 1 << 16);
  std::optional<CodedInputStream> coded(&file);
  std::uint64_t base = 0;  // bytes before the current CodedInputStream
  pb::TracePacket packet;
  pb::TracePacket inner;
  auto fail = [&](std::uint64_t at, const std::string& what) {
    throw TraceError(source + ": at byte " + std::to_string(at) + ": " + what);
  };
  // Compressed bundles read from the file, oldest first, each inflating on a thread of its own.
  struct PendingBundle {
    std::uint64_t at = 0;
    std::string what;
    std::future<std::string> inflated;
  };
  std::deque<PendingBundle> pending;
  const auto parse_oldest = [&] {
    PendingBundle oldest = std::move(pending.front());
    pending.pop_front();
    const std::string bundle = oldest.inflated.get();  // rethrows the inflating thread's error
    read_bundle(bundle, reader, inner, [&](std::uint64_t offset, const std::string& e) {
      fail(oldest.at,
           oldest.what + ", a compressed bundle: at its byte " + std::to_string(offset) + ": " + e);
    });
  };
  for (std::uint64_t n = 0;; ++n) {
    if (coded->CurrentPosition() >= kRenewAfter) {
      coded.reset();  // hands back what it buffered
      base = static_cast<std::uint64_t>(file.ByteCount());
      coded.emplace(&file);
    }
    const std::uint64_t at = base + static_cast<std::uint64_t>(coded->CurrentPosition());
    const std::uint32_t tag = coded->ReadTag();
    if (tag == 0) {
      if (coded->ConsumedEntireMessage()) break;  // the end of the file
      fail(at, "not a protobuf message (no field starts here); not a Perfetto trace");
    }
    const std::string what = "packet " + std::to_string(n);
    const std::uint32_t length =
        packet_length(*coded, tag, what, [&](const std::string& e) { fail(at, e); });
    const std::uint64_t body = base + static_cast<std::uint64_t>(coded->CurrentPosition());
    if (size > 0 && body + length > size)
      fail(at, what + " is " + std::to_string(length) + " bytes long and the file ends " +
                   std::to_string(size - body) + " bytes after its start: the file is cut short");
    const auto limit = coded->PushLimit(static_cast<int>(length));
    if (!packet.ParseFromCodedStream(&*coded) || coded->BytesUntilLimit() != 0)
      fail(at,
           what + " is not a valid TracePacket" + (size == 0 ? " (or the file is cut short)" : ""));
    coded->PopLimit(limit);
    // Room for the ops the file can hold, once its first packet says whether it is compressed:
    // growing the arrays as they fill would hold two copies at once.
    if (n == 0 && size > 0)
      reader.assembly().reserve(std::min(
          size / (packet.has_compressed_packets() ? kMinCompressedBytesPerOp : kMinBytesPerOp),
          kMaxReserve));
    if (packet.has_compressed_packets()) {
      // Inflated on another thread while the bundle before it is parsed here.
      pending.push_back({at, what,
                         std::async(std::launch::async,
                                    [&source, at, what,
                                     compressed = std::move(*packet.mutable_compressed_packets())] {
                                      return inflate_bundle(compressed, [&](const std::string& e) {
                                        throw TraceError(source + ": at byte " +
                                                         std::to_string(at) + ": " + what + ": " +
                                                         e);
                                      });
                                    })});
      if (pending.size() > kBundlesAhead) parse_oldest();
    } else {
      while (!pending.empty())
        parse_oldest();
      reader.packet(packet);
    }
    if (options.progress && (n + 1) % 4'096 == 0)
      options.progress(size > 0 ? std::min(1.0, static_cast<double>(at) / static_cast<double>(size))
                                : -1.0);
  }
  while (!pending.empty())
    parse_oldest();
  reader.finish();
  engine::TraceContents out = std::move(reader.assembly()).finish();
  if (options.progress) options.progress(1.0);
  return out;
}

}  // namespace clustersim::models
