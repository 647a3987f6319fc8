#include "models/chakra/chakra_import.hpp"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>

#include "engine/format.hpp"
#include "et_def.pb.h"

namespace clustersim::models::chakra {

namespace {

namespace pb = ChakraProtoMsg;
using engine::Category;
using engine::CollectiveType;
using engine::OpId;
using engine::Rank;

// The attributes import reads; any other is counted and named in a note.
const std::set<std::string, std::less<>> kReadAttributes = {
    "num_ops",  "tensor_size", "is_cpu_op", "comm_type",  "comm_size", "pg_name",
    "pg_desc",  "root",        "comm_src",  "comm_dst",   "comm_tag",  "stream",
    "category", "op_kind",     "algorithm", "duration_ps"};

const pb::AttributeProto* find_attr(const pb::Node& node, std::string_view name) {
  for (const pb::AttributeProto& a : node.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// Reads one file's nodes; every error names the file and the node.
class NodeReader {
 public:
  NodeReader(std::string file, const pb::Node& node) : file_(std::move(file)), node_(node) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ChakraError(file_ + ": node " + std::to_string(node_.id()) + " ('" + node_.name() +
                      "'): " + what);
  }

  // An integer attribute in whichever integer type the writer chose (Chakra's feeder reads
  // comm_size as int64, comm_src as int32, PyTorch's converter writes others as int64 or uint64).
  std::optional<std::int64_t> integer(std::string_view name) const {
    const pb::AttributeProto* a = find_attr(node_, name);
    if (a == nullptr) return std::nullopt;
    switch (a->value_case()) {
      case pb::AttributeProto::kInt32Val:
        return a->int32_val();
      case pb::AttributeProto::kInt64Val:
        return a->int64_val();
      case pb::AttributeProto::kUint32Val:
        return a->uint32_val();
      case pb::AttributeProto::kUint64Val:
        if (a->uint64_val() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail("attribute " + std::string(name) + " is " + std::to_string(a->uint64_val()) +
               "; allowed: at most 2^63 - 1");
        return static_cast<std::int64_t>(a->uint64_val());
      case pb::AttributeProto::kSint32Val:
        return a->sint32_val();
      case pb::AttributeProto::kSint64Val:
        return a->sint64_val();
      default:
        fail("attribute " + std::string(name) + " is not an integer; allowed: an integer");
    }
  }
  std::int64_t non_negative(std::string_view name, std::int64_t fallback) const {
    const std::int64_t v = integer(name).value_or(fallback);
    if (v < 0)
      fail("attribute " + std::string(name) + " is " + std::to_string(v) + "; allowed: >= 0");
    return v;
  }
  std::int64_t required(std::string_view name) const {
    if (!integer(name)) fail("attribute " + std::string(name) + " is missing");
    return non_negative(name, 0);
  }
  std::optional<std::string> text(std::string_view name) const {
    const pb::AttributeProto* a = find_attr(node_, name);
    if (a == nullptr) return std::nullopt;
    if (a->value_case() != pb::AttributeProto::kStringVal)
      fail("attribute " + std::string(name) + " is not a string; allowed: a string");
    return a->string_val();
  }
  bool flag(std::string_view name) const {
    const pb::AttributeProto* a = find_attr(node_, name);
    if (a == nullptr) return false;
    if (a->value_case() != pb::AttributeProto::kBoolVal)
      fail("attribute " + std::string(name) + " is not a bool; allowed: true or false");
    return a->bool_val();
  }

 private:
  std::string file_;
  const pb::Node& node_;
};

CollectiveType collective_type(const NodeReader& r, std::int64_t type, std::string& barrier_note) {
  switch (type) {
    case pb::ALL_REDUCE:
      return CollectiveType::all_reduce;
    case pb::REDUCE:
      return CollectiveType::reduce;
    case pb::ALL_GATHER:
      return CollectiveType::all_gather;
    case pb::GATHER:
      return CollectiveType::gather;
    case pb::SCATTER:
      return CollectiveType::scatter;
    case pb::BROADCAST:
      return CollectiveType::broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveType::all_to_all;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      return CollectiveType::reduce_scatter;
    case pb::BARRIER:
      barrier_note = "a BARRIER runs as an all-reduce of its comm_size (NCCL's barrier is one)";
      return CollectiveType::all_reduce;
    default:
      r.fail("comm_type " + std::to_string(type) +
             " is not a Chakra collective; allowed: 0 (ALL_REDUCE) to 9 (BARRIER)");
  }
}

// A time in picoseconds that the simulated clock holds.
engine::Time recorded_duration(const NodeReader& r, const pb::Node& node) {
  constexpr std::int64_t kMaxPs = engine::Time::end_of_clock().ps();
  if (const auto ps = r.integer("duration_ps")) {  // clustersim's own, exact
    if (*ps < 0 || *ps >= kMaxPs)
      r.fail("attribute duration_ps is " + std::to_string(*ps) +
             "; allowed: 0 to the simulated clock's range");
    return engine::Time::from_ps(*ps);
  }
  if (node.duration_micros() >= static_cast<std::uint64_t>(kMaxPs / 1'000'000))
    r.fail("duration_micros " + std::to_string(node.duration_micros()) +
           " is longer than the simulated clock holds (about 106 days)");
  return engine::Time::from_ps(static_cast<std::int64_t>(node.duration_micros()) * 1'000'000);
}

// Everything read from the files, across ranks.
class Importer {
 public:
  Importer(std::uint32_t world, const std::string& comm_groups)
      : world_(world), builder_(world), comm_groups_file_(comm_groups) {
    if (!comm_groups.empty()) read_comm_groups(comm_groups);
  }

  void read_rank(Rank rank, const std::string& file);
  ImportedWorkload finish() &&;

 private:
  void read_comm_groups(const std::string& path);
  engine::GroupId group(const NodeReader& r, Rank rank, const std::optional<std::string>& key,
                        const std::optional<std::string>& desc);
  std::uint32_t duration_list(engine::Time d);
  void add_op(Rank rank, const pb::Node& node, const std::string& file,
              const std::vector<OpId>& deps);

  std::uint32_t world_;
  engine::ScheduleBuilder builder_;
  std::string comm_groups_file_;
  std::map<std::string, std::vector<Rank>> group_ranks_;  // from the comm-group file
  std::map<std::string, engine::GroupId> groups_;         // those used so far, and "" (world)
  std::unordered_map<std::int64_t, std::uint32_t> list_of_duration_;
  std::vector<engine::Time> list_durations_;
  std::map<std::string, std::uint64_t> unread_attributes_;  // name -> nodes carrying it
  std::uint64_t nodes_ = 0, compute_ = 0, collectives_ = 0, p2p_ = 0, metadata_ = 0, cpu_ = 0;
  std::uint64_t guessed_categories_ = 0, reordered_files_ = 0;
  std::string barrier_note_;
};

void Importer::read_comm_groups(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ChakraError(path + ": cannot read the comm-group file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ChakraError(path + ": not JSON: " + e.what());
  }
  if (!j.is_object())
    throw ChakraError(path + ": expected a map of group id to ranks, e.g. {\"1\": [0, 1]}");
  for (const auto& [key, ranks] : j.items()) {
    const std::string where = path + ": group \"" + key + "\"";
    if (!ranks.is_array() || ranks.empty())
      throw ChakraError(where + ": expected a non-empty list of ranks");
    std::vector<Rank> list;
    std::set<Rank> seen;
    for (const auto& v : ranks) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          v.get<std::int64_t>() >= static_cast<std::int64_t>(world_))
        throw ChakraError(where + ": rank " + v.dump() + "; allowed: integers 0 to " +
                          std::to_string(world_ - 1) + " (the cluster's " + std::to_string(world_) +
                          " GPUs)");
      const auto r = static_cast<Rank>(v.get<std::int64_t>());
      if (!seen.insert(r).second)
        throw ChakraError(where + ": rank " + std::to_string(r) + " is listed twice");
      list.push_back(r);
    }
    group_ranks_.emplace(key, std::move(list));
  }
}

engine::GroupId Importer::group(const NodeReader& r, Rank rank,
                                const std::optional<std::string>& key,
                                const std::optional<std::string>& desc) {
  const std::string k = key.value_or("");
  if (const auto it = groups_.find(k); it != groups_.end()) {
    const auto& members = builder_.peek().groups[it->second].ranks;
    if (std::find(members.begin(), members.end(), rank) == members.end())
      r.fail("rank " + std::to_string(rank) + " is not a member of process group \"" + k + "\"");
    return it->second;
  }
  std::vector<Rank> ranks;
  if (!key) {
    for (Rank x = 0; x < world_; ++x)
      ranks.push_back(x);
  } else {
    const auto it = group_ranks_.find(k);
    if (it == group_ranks_.end())
      r.fail("pg_name \"" + k + "\" is not a group of " +
             (comm_groups_file_.empty() ? std::string("the comm-group file (none was given: "
                                                      "workload.comm_groups)")
                                        : comm_groups_file_));
    ranks = it->second;
  }
  const std::string name = key ? desc.value_or("pg " + k) : "world";
  const engine::GroupId g = builder_.add_group(std::move(ranks), name);
  groups_.emplace(k, g);
  return group(r, rank, key, desc);
}

// One kernel list per distinct recorded duration, named after it: ops that recorded the same
// time share it, as ops of identical layers share a list in a native run.
std::uint32_t Importer::duration_list(engine::Time d) {
  if (const auto it = list_of_duration_.find(d.ps()); it != list_of_duration_.end())
    return it->second;
  engine::KernelTable& table = builder_.kernel_table();
  engine::Kernel k;
  k.kind = engine::KernelKind::launch_only;
  k.name = table.name("recorded " + engine::format_seconds(d.seconds()) + " (" +
                      std::to_string(d.ps()) + " ps)");
  const std::uint32_t list = table.intern(std::span<const engine::Kernel>(&k, 1));
  if (list >= list_durations_.size()) list_durations_.resize(list + 1, engine::Time::zero());
  list_durations_[list] = d;
  list_of_duration_.emplace(d.ps(), list);
  return list;
}

void Importer::add_op(Rank rank, const pb::Node& node, const std::string& file,
                      const std::vector<OpId>& deps) {
  const NodeReader r(file, node);
  for (const pb::AttributeProto& a : node.attr())
    if (!kReadAttributes.contains(a.name())) ++unread_attributes_[a.name()];
  ++nodes_;

  // Where the trace says (clustersim's export does), else NCCL's and PyTorch's habits: one stream
  // for GPU compute, one per process group, one per peer.
  const std::optional<std::string> stream_attr = r.text("stream");
  const std::optional<std::string> category_attr = r.text("category");
  std::optional<Category> category;
  if (category_attr) {
    category = engine::kCategoryNames.parse(*category_attr);
    if (!category)
      r.fail("category \"" + *category_attr + "\"; allowed: " + engine::kCategoryNames.allowed());
  }
  const bool backward_by_name = node.name().find("ackward") != std::string::npos;
  auto category_or = [&](Category fallback) {
    if (category) return *category;
    ++guessed_categories_;
    return fallback;
  };
  engine::ScheduleBuilder::Common c;
  c.rank = rank;
  c.name = node.name();
  c.deps = deps;
  auto stream = [&](const std::string& fallback) {
    c.stream = builder_.stream(stream_attr.value_or(fallback));
  };

  switch (node.type()) {
    case pb::COMP_NODE: {
      const bool cpu = r.flag("is_cpu_op");
      stream(cpu ? "cpu" : "compute");
      c.category = category_or(backward_by_name ? Category::backward : Category::forward);
      const double flops = static_cast<double>(r.non_negative("num_ops", 0));
      const auto bytes = static_cast<std::uint64_t>(r.non_negative("tensor_size", 0));
      builder_.compute(c, flops, bytes, 0, duration_list(recorded_duration(r, node)));
      ++(cpu ? cpu_ : compute_);
      return;
    }
    case pb::METADATA_NODE:
      // Bookkeeping (PyTorch records process-group set-up this way): no time, but it orders.
      stream("metadata");
      c.category = category_or(Category::forward);
      builder_.compute(c, 0, 0, 0, duration_list(engine::Time::zero()));
      ++metadata_;
      return;
    case pb::COMM_COLL_NODE: {
      const std::optional<std::string> key = r.text("pg_name");
      const engine::GroupId g = group(r, rank, key, r.text("pg_desc"));
      stream(key ? "comm pg " + *key : "comm");
      c.category = category_or(Category::dp_comm);
      const CollectiveType type = collective_type(r, r.required("comm_type"), barrier_note_);
      engine::Algorithm algorithm = engine::Algorithm::automatic;
      if (const auto a = r.text("algorithm")) {
        const auto found = engine::kAlgorithmNames.parse(*a);
        if (!found)
          r.fail("algorithm \"" + *a + "\"; allowed: " + engine::kAlgorithmNames.allowed());
        algorithm = *found;
      }
      const std::int64_t root = r.non_negative("root", 0);
      const std::size_t members = builder_.peek().groups[g].ranks.size();
      if (static_cast<std::uint64_t>(root) >= members)
        r.fail("root " + std::to_string(root) + "; allowed: an index into the group's " +
               std::to_string(members) + " ranks");
      builder_.collective(c, type, g, static_cast<std::uint64_t>(r.required("comm_size")),
                          algorithm, static_cast<std::uint32_t>(root));
      ++collectives_;
      return;
    }
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
      const bool send = node.type() == pb::COMM_SEND_NODE;
      const std::int64_t src = r.required("comm_src"), dst = r.required("comm_dst");
      const std::int64_t self = send ? src : dst, peer = send ? dst : src;
      if (self != rank)
        r.fail(std::string(send ? "comm_src" : "comm_dst") + " is " + std::to_string(self) +
               " in the trace of rank " + std::to_string(rank) +
               "; allowed: " + std::to_string(rank));
      if (peer >= world_ || peer == rank)
        r.fail(std::string(send ? "comm_dst" : "comm_src") + " is " + std::to_string(peer) +
               "; allowed: another rank, 0 to " + std::to_string(world_ - 1));
      const std::int64_t tag = r.non_negative("comm_tag", 0);
      if (tag > std::numeric_limits<std::uint32_t>::max())
        r.fail("comm_tag " + std::to_string(tag) + "; allowed: at most 2^32 - 1");
      // pg_name: the group whose communicator it was posted on (docs/interop.md).
      if (const std::optional<std::string> key = r.text("pg_name")) {
        const engine::GroupId g = group(r, rank, key, r.text("pg_desc"));
        const auto& members = builder_.peek().groups[g].ranks;
        if (std::find(members.begin(), members.end(), static_cast<Rank>(peer)) == members.end())
          r.fail("rank " + std::to_string(peer) + " is not a member of process group \"" + *key +
                 "\"");
        try {
          builder_.post_sends_on(g);
        } catch (const std::invalid_argument& e) {
          r.fail(e.what());
        }
      }
      stream("p2p " + std::to_string(peer));
      c.category = category_or(Category::pp_comm);
      const auto bytes = static_cast<std::uint64_t>(r.required("comm_size"));
      if (send)
        builder_.send(c, static_cast<Rank>(peer), bytes, static_cast<std::uint32_t>(tag));
      else
        builder_.recv(c, static_cast<Rank>(peer), bytes, static_cast<std::uint32_t>(tag));
      ++p2p_;
      return;
    }
    default:
      r.fail("node type " + pb::NodeType_Name(node.type()) +
             " is not simulated; allowed: COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, "
             "COMM_RECV_NODE, METADATA_NODE");
  }
}

void Importer::read_rank(Rank rank, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ChakraError(file + ": cannot read the trace");
  google::protobuf::io::IstreamInputStream stream(&in);
  pb::GlobalMetadata metadata;
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &clean_eof))
    throw ChakraError(file + (clean_eof
                                  ? ": empty; allowed: a Chakra trace (GlobalMetadata, "
                                    "then nodes, each length-delimited)"
                                  : ": not a Chakra trace: its GlobalMetadata is unreadable"));
  std::vector<pb::Node> nodes;
  while (true) {
    pb::Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof)) {
      if (clean_eof) break;
      throw ChakraError(file + ": node " + std::to_string(nodes.size()) +
                        " (counting from 0 after the metadata) is unreadable: a truncated or "
                        "corrupt trace");
    }
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) throw ChakraError(file + ": the trace has no nodes");
  if (nodes.size() > std::numeric_limits<std::uint32_t>::max() / 2)
    throw ChakraError(file + ": more nodes than a schedule holds");

  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(nodes.size());
  for (std::uint32_t i = 0; i < nodes.size(); ++i)
    if (!index.emplace(nodes[i].id(), i).second)
      NodeReader(file, nodes[i]).fail("a second node with this id");
  // Dependencies as positions; data and control dependencies both order (ASTRA-sim's feeder
  // follows data_deps; clustersim writes program order into both).
  std::vector<std::vector<std::uint32_t>> deps(nodes.size());
  bool file_order = true;
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    for (const auto* list : {&nodes[i].data_deps(), &nodes[i].ctrl_deps()})
      for (const std::uint64_t id : *list) {
        const auto it = index.find(id);
        if (it == index.end())
          NodeReader(file, nodes[i])
              .fail("depends on node " + std::to_string(id) + ", which the trace does not have");
        if (it->second == i) NodeReader(file, nodes[i]).fail("depends on itself");
        if (std::find(deps[i].begin(), deps[i].end(), it->second) == deps[i].end())
          deps[i].push_back(it->second);
        file_order = file_order && it->second < i;
      }
  }
  // Ops are issued in file order where it respects the dependencies (streams run in issue
  // order), else in a topological order.
  std::vector<std::uint32_t> order(nodes.size());
  if (file_order) {
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
      order[i] = i;
  } else {
    ++reordered_files_;
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> graph(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
      for (const std::uint32_t d : deps[i])
        boost::add_edge(d, i, graph);
    std::vector<std::uint32_t> reversed;
    try {
      boost::topological_sort(graph, std::back_inserter(reversed));
    } catch (const boost::not_a_dag&) {
      throw ChakraError(file + ": the dependencies form a cycle; allowed: a DAG");
    }
    order.assign(reversed.rbegin(), reversed.rend());
  }
  std::vector<OpId> op_of(nodes.size(), engine::kNone);
  std::vector<OpId> op_deps;
  for (const std::uint32_t i : order) {
    op_deps.clear();
    for (const std::uint32_t d : deps[i])
      op_deps.push_back(op_of[d]);
    try {
      op_of[i] = static_cast<OpId>(builder_.size());
      add_op(rank, nodes[i], file, op_deps);
    } catch (const std::invalid_argument& e) {  // the IR's own checks
      NodeReader(file, nodes[i]).fail(e.what());
    } catch (const std::length_error& e) {
      NodeReader(file, nodes[i]).fail(e.what());
    }
  }
}

ImportedWorkload Importer::finish() && {
  ImportedWorkload w;
  auto count = [](std::uint64_t n) { return std::to_string(n); };
  w.notes.push_back("workload from Chakra traces: " + count(nodes_) + " nodes on " +
                    std::to_string(world_) + " ranks (" + count(compute_) + " compute, " +
                    count(collectives_) + " collective, " + count(p2p_) + " send/recv" +
                    (cpu_ > 0 ? ", " + count(cpu_) + " CPU" : std::string()) +
                    (metadata_ > 0 ? ", " + count(metadata_) + " metadata" : std::string()) +
                    "); compute takes its recorded duration, communication is simulated");
  if (guessed_categories_ > 0)
    w.notes.push_back(count(guessed_categories_) +
                      " nodes name no category: compute counted as forward (backward where the "
                      "name says so), collectives as dp-comm, sends and receives as pp-comm");
  if (reordered_files_ > 0)
    w.notes.push_back(std::to_string(reordered_files_) +
                      " trace files list a node before one it depends on: their nodes were "
                      "issued in a topological order");
  if (!barrier_note_.empty()) w.notes.push_back(barrier_note_);
  if (!unread_attributes_.empty()) {
    std::string names;
    for (const auto& [name, n] : unread_attributes_)
      names += (names.empty() ? "" : ", ") + name + " (" + count(n) + ")";
    w.notes.push_back("attributes not read (nodes carrying them): " + names);
  }
  w.schedule = std::move(builder_).finish();
  w.list_durations = std::move(list_durations_);
  return w;
}

}  // namespace

ImportedWorkload import_chakra(const std::string& prefix, const std::string& comm_groups,
                               std::uint32_t world_size,
                               const std::function<void(double)>& progress) {
  if (world_size == 0) throw ChakraError("a Chakra workload needs at least one rank");
  // Every rank's file, and no more: a trace set for another world size is refused, not cut.
  for (std::uint32_t r = 0; r < world_size; ++r) {
    const std::string file = prefix + "." + std::to_string(r) + ".et";
    if (!std::filesystem::is_regular_file(file))
      throw ChakraError(file + ": missing; allowed: one trace per rank of the cluster's " +
                        std::to_string(world_size) + " GPUs, " + prefix + ".0.et to " + prefix +
                        "." + std::to_string(world_size - 1) + ".et");
  }
  const std::string extra = prefix + "." + std::to_string(world_size) + ".et";
  if (std::filesystem::exists(extra))
    throw ChakraError(extra + ": a trace for rank " + std::to_string(world_size) +
                      ", but the cluster has " + std::to_string(world_size) +
                      " GPUs; allowed: a cluster with as many GPUs as there are traces");
  Importer importer(world_size, comm_groups);
  for (std::uint32_t r = 0; r < world_size; ++r) {
    importer.read_rank(r, prefix + "." + std::to_string(r) + ".et");
    if (progress) progress(static_cast<double>(r + 1) / world_size);
  }
  return std::move(importer).finish();
}

}  // namespace clustersim::models::chakra
