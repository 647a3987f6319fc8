#include "models/chakra/chakra_export.hpp"

#include <google/protobuf/util/delimited_message_util.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "engine/io/atomic_file.hpp"
#include "et_def.pb.h"

namespace clustersim::models::chakra {

namespace {

namespace pb = ChakraProtoMsg;

// Chakra's CollectiveCommType for each of clustersim's collectives that it has.
pb::CollectiveCommType chakra_collective(engine::CollectiveType type, const std::string& label) {
  using engine::CollectiveType;
  switch (type) {
    case CollectiveType::all_reduce:
      return pb::ALL_REDUCE;
    case CollectiveType::all_gather:
      return pb::ALL_GATHER;
    case CollectiveType::reduce_scatter:
      return pb::REDUCE_SCATTER;
    case CollectiveType::all_to_all:
      return pb::ALL_TO_ALL;
    case CollectiveType::broadcast:
      return pb::BROADCAST;
    case CollectiveType::reduce:
      return pb::REDUCE;
    case CollectiveType::scatter:
      return pb::SCATTER;
    case CollectiveType::gather:
      return pb::GATHER;
    case CollectiveType::send_recv:
      break;
  }
  throw std::runtime_error("op '" + label + "': a send_recv collective has no Chakra equivalent");
}

// A new attribute of `node`; the caller sets its value with the type Chakra's feeder reads for
// that name (et_feeder_node.cpp).
pb::AttributeProto& add_attr(pb::Node& node, const char* name) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  return *a;
}

// A process group's name in the comm-group JSON and in pg_name: its index + 1 (ASTRA-sim takes
// the key as an integer id; 0 is avoided as PyTorch-converted traces avoid it).
std::string group_key(engine::GroupId group) {
  return std::to_string(group + 1);
}

std::uint64_t whole_microseconds(engine::Time duration) {
  return static_cast<std::uint64_t>(std::llround(duration.seconds() * 1e6));
}

void write_rank(const Prediction& p, engine::Rank rank, const std::vector<engine::OpId>& ops,
                const std::string& path) {
  const engine::Schedule& s = p.output.built.schedule;
  const engine::Timeline& t = p.output.timeline;
  // Node ids are positions in the rank's list; the IR's dependencies are global op ids.
  std::unordered_map<engine::OpId, std::uint64_t> local;
  local.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i)
    local.emplace(ops[i], i);
  std::unordered_map<engine::StreamId, std::uint64_t> last_on_stream;

  engine::write_file_atomically(path, [&](std::ostream& os) {
    pb::GlobalMetadata metadata;
    metadata.set_version("0.0.4");
    auto* source = metadata.add_attr();
    source->set_name("source");
    source->set_string_val(std::string("clustersim ") + CLUSTERSIM_VERSION + ": " +
                           p.output.result.scenario + ", rank " + std::to_string(rank));
    if (!google::protobuf::util::SerializeDelimitedToOstream(metadata, &os))
      throw std::runtime_error(path + ": writing the trace failed");
    pb::Node node;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const engine::Op& op = s.ops[ops[i]];
      const std::string label = s.label(op);
      node.Clear();
      node.set_id(i);
      node.set_name(label);
      // The op's own time: from launch, so a collective's wait for its peers is left out.
      // Stream order as Chakra states it: the previous op on the stream is a control dependency
      // (program order) and, because Chakra's feeder honours data_deps only, a data dependency
      // too, beside the plan's own dependencies.
      if (const auto it = last_on_stream.find(op.stream); it != last_on_stream.end()) {
        node.add_ctrl_deps(it->second);
        node.add_data_deps(it->second);
      }
      for (const engine::OpId dep : s.dependencies(op)) {
        const std::uint64_t d = local.at(dep);
        if (node.ctrl_deps_size() == 0 || node.ctrl_deps(0) != d) node.add_data_deps(d);
      }
      last_on_stream[op.stream] = i;
      const engine::Time duration = t.end[ops[i]] - t.launch[ops[i]];
      node.set_duration_micros(whole_microseconds(duration));
      add_attr(node, "is_cpu_op").set_bool_val(false);
      switch (op.kind) {
        case engine::OpKind::compute:
        case engine::OpKind::copy:
          node.set_type(pb::COMP_NODE);
          add_attr(node, "num_ops")
              .set_int64_val(op.kind == engine::OpKind::compute ? std::llround(s.flops(op)) : 0);
          add_attr(node, "tensor_size").set_uint64_val(op.bytes);
          // The exact time, for import: duration_micros rounds it.
          add_attr(node, "duration_ps").set_int64_val(duration.ps());
          break;
        case engine::OpKind::collective:
          node.set_type(pb::COMM_COLL_NODE);
          add_attr(node, "comm_type").set_int64_val(chakra_collective(op.collective, label));
          add_attr(node, "comm_size").set_int64_val(static_cast<std::int64_t>(op.bytes));
          add_attr(node, "pg_name").set_string_val(group_key(op.group_or_peer));
          // PyTorch's name for the group's description ("dp[3]", "tp[0]").
          add_attr(node, "pg_desc").set_string_val(s.groups[op.group_or_peer].name);
          if (op.algorithm != engine::Algorithm::automatic)
            add_attr(node, "algorithm")
                .set_string_val(std::string(engine::to_string(op.algorithm)));
          if (op.collective == engine::CollectiveType::broadcast ||
              op.collective == engine::CollectiveType::reduce ||
              op.collective == engine::CollectiveType::scatter ||
              op.collective == engine::CollectiveType::gather)
            add_attr(node, "root").set_int32_val(static_cast<std::int32_t>(op.tag()));
          break;
        case engine::OpKind::send:
        case engine::OpKind::recv: {
          const bool send = op.kind == engine::OpKind::send;
          node.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
          add_attr(node, "comm_src")
              .set_int32_val(static_cast<std::int32_t>(send ? rank : op.group_or_peer));
          add_attr(node, "comm_dst")
              .set_int32_val(static_cast<std::int32_t>(send ? op.group_or_peer : rank));
          add_attr(node, "comm_tag").set_int32_val(static_cast<std::int32_t>(op.tag()));
          add_attr(node, "comm_size").set_int64_val(static_cast<std::int64_t>(op.bytes));
          // The group whose communicator it was posted on, if not the pair's.
          const engine::GroupId comm = s.send_group(op);
          if (comm != engine::kNone) {
            add_attr(node, "pg_name").set_string_val(group_key(comm));
            add_attr(node, "pg_desc").set_string_val(s.groups[comm].name);
          }
          break;
        }
      }
      // clustersim's own vocabulary, kept for readers and for import (docs/interop.md).
      add_attr(node, "stream").set_string_val(s.stream_names[op.stream]);
      add_attr(node, "category").set_string_val(std::string(engine::to_string(op.category)));
      if (op.kind == engine::OpKind::copy) add_attr(node, "op_kind").set_string_val("copy");
      if (!google::protobuf::util::SerializeDelimitedToOstream(node, &os))
        throw std::runtime_error(path + ": writing the trace failed");
    }
  });
}

}  // namespace

std::vector<std::string> chakra_output_paths(const std::string& prefix, std::uint32_t num_ranks) {
  std::vector<std::string> paths;
  paths.reserve(num_ranks + 1);
  for (std::uint32_t r = 0; r < num_ranks; ++r)
    paths.push_back(prefix + "." + std::to_string(r) + ".et");
  paths.push_back(prefix + ".json");
  return paths;
}

void write_chakra_traces(const Prediction& p, const std::string& prefix) {
  const engine::Schedule& s = p.output.built.schedule;
  const std::vector<std::string> paths = chakra_output_paths(prefix, s.num_ranks);
  for (const std::string& path : paths)
    check_output_path(path, p.scenario.inputs, "--out");
  std::vector<std::vector<engine::OpId>> ops_of(s.num_ranks);
  for (auto op = s.ops.begin(); op != s.ops.end(); ++op)
    ops_of[(*op).rank].push_back(op.id());
  for (engine::Rank r = 0; r < s.num_ranks; ++r)
    write_rank(p, r, ops_of[r], paths[r]);
  // ASTRA-sim's --comm-group-configuration: {"<id>": [ranks...]}, ids as in pg_name.
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (engine::GroupId g = 0; g < s.groups.size(); ++g)
    groups[group_key(g)] = s.groups[g].ranks;
  engine::write_file_atomically(paths.back(),
                                [&](std::ostream& os) { os << groups.dump(2) << "\n"; });
}

}  // namespace clustersim::models::chakra
