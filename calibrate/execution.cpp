#include "calibrate/execution.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "engine/io/atomic_file.hpp"
#include "models/result_json.hpp"

namespace clustersim::calibrate {

namespace {

using engine::OpId;
using engine::OpKind;

// Groups of ops that run together: every member's n-th collective on a group, and each send with
// the recv it matches (by source, destination and tag, in order, as MPI and NCCL match them).
std::vector<std::vector<OpId>> matching_sets(const engine::Schedule& s) {
  std::vector<std::vector<OpId>> sets;
  // group -> rank -> that rank's collectives on the group, in issue order
  std::vector<std::map<engine::Rank, std::vector<OpId>>> by_group(s.groups.size());
  std::map<std::tuple<engine::Rank, engine::Rank, std::uint32_t>, std::vector<OpId>> sends, recvs;
  const engine::OpStore::Reader in_order = s.ops.reader();
  for (OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    if (op.kind == OpKind::collective)
      by_group.at(op.group_or_peer)[op.rank].push_back(id);
    else if (op.kind == OpKind::send)
      sends[{op.rank, op.group_or_peer, op.tag()}].push_back(id);
    else if (op.kind == OpKind::recv)
      recvs[{op.group_or_peer, op.rank, op.tag()}].push_back(id);
  }
  for (const auto& members : by_group) {
    std::size_t most = 0;
    for (const auto& [rank, ids] : members)
      most = std::max(most, ids.size());
    for (std::size_t n = 0; n < most; ++n) {
      std::vector<OpId> set;
      for (const auto& [rank, ids] : members)
        if (n < ids.size()) set.push_back(ids[n]);
      sets.push_back(std::move(set));
    }
  }
  for (const auto& [key, ids] : sends) {
    const auto it = recvs.find(key);
    for (std::size_t n = 0; n < ids.size(); ++n) {
      std::vector<OpId> set{ids[n]};
      if (it != recvs.end() && n < it->second.size()) set.push_back(it->second[n]);
      sets.push_back(std::move(set));
    }
  }
  return sets;
}

}  // namespace

engine::Timeline measured_timeline(const engine::Schedule& schedule,
                                   const std::vector<OpTimes>& ops, std::size_t num_links) {
  if (ops.size() != schedule.ops.size())
    throw std::invalid_argument("measured_timeline: " + std::to_string(ops.size()) +
                                " measured ops for a schedule of " +
                                std::to_string(schedule.ops.size()));
  engine::Timeline tl;
  const std::size_t n = ops.size();
  tl.start.resize(n);
  tl.end.resize(n);
  tl.launch.resize(n);
  tl.algorithm.assign(n, engine::Algorithm::automatic);
  tl.protocol.assign(n, engine::Protocol{});
  tl.channels.assign(n, 0);
  tl.link_bytes.assign(num_links, 0.0);  // an execution does not see links
  engine::Time makespan = engine::Time::zero();
  for (std::size_t i = 0; i < n; ++i) {
    tl.start[i] = engine::Time::from_seconds(std::max(0.0, ops[i].start_s));
    // A measured op may end at its start (clock resolution), never before it.
    tl.end[i] = std::max(tl.start[i], engine::Time::from_seconds(ops[i].end_s));
    tl.launch[i] = tl.start[i];
    makespan = std::max(makespan, tl.end[i]);
  }
  for (const auto& set : matching_sets(schedule)) {
    engine::Time last = engine::Time::zero();
    for (OpId id : set)
      last = std::max(last, tl.start[id]);
    for (OpId id : set)
      tl.launch[id] = std::min(last, tl.end[id]);
  }
  tl.makespan = makespan;
  return tl;
}

models::Prediction measured_prediction(const models::Prediction& predicted,
                                       const Execution& execution) {
  models::Prediction m = predicted;
  m.output.timeline = measured_timeline(predicted.output.built.schedule, execution.ops,
                                        predicted.output.timeline.link_bytes.size());
  m.output.result =
      models::compute_metrics(m.scenario, m.output.built, m.output.timeline, m.output.topology);
  m.output.result.network_model = "measured (" + execution.info.backend + " back end)";
  m.output.result.events = 0;
  m.output.result.notes = {"measured by the " + execution.info.backend + " back end on " +
                           execution.info.device + ": median of " +
                           std::to_string(execution.info.iterations) + " run(s) after " +
                           std::to_string(execution.info.warmup) +
                           " warm-up run(s); links are not measured (zero bytes)"};
  return m;
}

nlohmann::ordered_json op_json(const engine::Schedule& s, OpId id,
                               const engine::Timeline& predicted) {
  const engine::Op& op = s.ops[id];
  return {{"id", id},
          {"rank", op.rank},
          {"stream", s.stream_names.at(op.stream)},
          {"label", s.label(op)},
          {"kind", engine::to_string(op.kind)},
          {"category", engine::to_string(op.category)},
          {"predicted_start_s", predicted.start[id].seconds()},
          {"predicted_end_s", predicted.end[id].seconds()}};
}

nlohmann::ordered_json execution_to_json(const models::Prediction& predicted,
                                         const models::Prediction& measured, const Execution& e) {
  nlohmann::ordered_json j = models::result_to_json(measured.output.result, false);
  const ExecutionInfo& i = e.info;
  j["execution"] = {{"backend", i.backend},
                    {"device", i.device},
                    {"ranks", i.ranks},
                    {"hosts", i.hosts},
                    {"iterations", i.iterations},
                    {"warmup", i.warmup},
                    {"work_scale", i.work_scale},
                    {"compute_dtype", i.compute_dtype},
                    {"op_timeout_s", i.op_timeout_s},
                    {"clock_offsets_s", i.clock_offsets_s},
                    {"run_makespans_s", i.run_makespans_s},
                    {"representative_run", i.representative_run},
                    {"values_checked", i.values_checked},
                    {"values_wrong", i.values_wrong},
                    {"predicted_iteration_time_s", predicted.output.result.iteration_time_s}};
  const engine::Schedule& s = predicted.output.built.schedule;
  const engine::Timeline& p = predicted.output.timeline;
  const engine::Timeline& m = measured.output.timeline;
  const int per_node = predicted.scenario.cluster.topology.node.gpus;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  const engine::OpStore::Reader in_order = s.ops.reader();
  for (OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    nlohmann::ordered_json o = op_json(s, id, p);
    o["start_s"] = m.start[id].seconds();
    o["launch_s"] = m.launch[id].seconds();
    o["end_s"] = m.end[id].seconds();
    o["bytes"] = op.bytes;
    // What `calibrate from-execution` fits: FLOPs of compute, the shape of a collective.
    if (op.kind == OpKind::compute) o["flops"] = s.flops(op);
    if (op.kind == OpKind::collective) {
      const auto& ranks = s.groups.at(op.group_or_peer).ranks;
      std::set<engine::Rank> nodes;
      for (engine::Rank r : ranks)
        nodes.insert(r / static_cast<engine::Rank>(std::max(1, per_node)));
      o["collective"] = engine::to_string(op.collective);
      o["group_ranks"] = ranks.size();
      o["group_nodes"] = nodes.size();
    }
    ops.push_back(std::move(o));
  }
  j["ops"] = std::move(ops);
  return j;
}

void write_execution(const models::Prediction& predicted, const Execution& execution,
                     const std::string& json_path, const std::string& trace_path) {
  const models::Prediction measured = measured_prediction(predicted, execution);
  if (!json_path.empty()) {
    models::check_output_path(json_path, predicted.scenario.inputs, "--json");
    const auto j = execution_to_json(predicted, measured, execution);
    engine::write_file_atomically(json_path, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
  }
  if (!trace_path.empty()) models::write_trace(measured, trace_path);
}

}  // namespace clustersim::calibrate
