#include "calibrate/kineto_map.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "calibrate/compare.hpp"

namespace clustersim::calibrate {

namespace {

using engine::OpKind;
using nlohmann::ordered_json;

struct Kernel {
  std::string name;
  double start_s = 0, end_s = 0;
};

// The op a NCCL kernel stands for, as "all_reduce", ..., "send", "recv", "sendrecv"; "" for a
// kernel that is not NCCL's, "?" for a NCCL kernel of another kind.
std::string nccl_kind(std::string_view name) {
  if (name.rfind("ncclKernel_", 0) != 0 && name.rfind("ncclDevKernel_", 0) != 0) return "";
  const std::string_view rest = name.substr(name.find('_') + 1);
  static const std::pair<std::string_view, const char*> kinds[] = {
      {"AllReduce", "all_reduce"},
      {"AllGather", "all_gather"},
      {"ReduceScatter", "reduce_scatter"},
      {"Broadcast", "broadcast"},
      {"Reduce", "reduce"},
      {"SendRecv", "sendrecv"},
      {"Send", "send"},
      {"Recv", "recv"}};
  for (const auto& [prefix, kind] : kinds)
    if (rest.rfind(prefix, 0) == 0) return kind;
  return "?";
}

}  // namespace

bool is_kineto_trace(const ordered_json& doc) {
  return doc.is_object() && doc.contains("traceEvents") && !doc.contains("iteration_time_s");
}

KinetoMapping map_kineto_trace(const engine::Schedule& s, const ordered_json& trace,
                               const std::string& file) {
  KinetoMapping m;
  if (const auto it = trace.find("distributedInfo"); it != trace.end() && it->contains("rank"))
    m.rank = it->at("rank").get<engine::Rank>();
  if (m.rank >= s.num_ranks)
    throw CompareError(file + ": distributedInfo.rank " + std::to_string(m.rank) +
                       " is not a rank of the scenario (" + std::to_string(s.num_ranks) +
                       " ranks)");
  const ordered_json& events = trace.at("traceEvents");
  std::vector<Kernel> compute;
  std::map<std::string, std::vector<Kernel>> nccl;  // by kind, in time order
  double first = 1e300, last = -1e300;
  std::vector<Kernel> all;
  for (const ordered_json& e : events) {
    if (!e.is_object() || e.value("ph", "") != "X" || e.value("cat", "") != "kernel") continue;
    const double ts = e.at("ts").get<double>() * 1e-6, dur = e.at("dur").get<double>() * 1e-6;
    all.push_back({e.at("name").get<std::string>(), ts, ts + dur});
    first = std::min(first, ts);
    last = std::max(last, ts + dur);
  }
  if (all.empty())
    throw CompareError(file + ": no GPU kernels (events with \"cat\": \"kernel\") in traceEvents");
  std::stable_sort(all.begin(), all.end(),
                   [](const Kernel& a, const Kernel& b) { return a.start_s < b.start_s; });
  for (Kernel& k : all) {
    k.start_s -= first;
    k.end_s -= first;
    const std::string kind = nccl_kind(k.name);
    if (kind.empty())
      compute.push_back(k);
    else
      nccl[kind].push_back(k);
  }
  m.span_s = last - first;
  m.ops.assign(s.ops.size(), std::nullopt);

  std::size_t next_compute = 0;
  std::map<std::string, std::size_t> next_nccl;
  auto take_nccl = [&](const std::string& kind) -> std::optional<OpTimes> {
    auto& list = nccl[kind];
    std::size_t& i = next_nccl[kind];
    if (i >= list.size()) return std::nullopt;
    const Kernel& k = list[i++];
    return OpTimes{k.start_s, k.end_s};
  };
  const engine::OpStore::Reader in_order = s.ops.reader();
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    if (op.rank != m.rank) continue;
    std::optional<OpTimes> t;
    if (op.kind == OpKind::compute) {
      const std::size_t count = op.kernels == engine::kNone ? 1 : s.kernels.list(op.kernels).size();
      if (count > 0 && next_compute + count <= compute.size()) {
        t = OpTimes{compute[next_compute].start_s, compute[next_compute + count - 1].end_s};
        next_compute += count;
      }
    } else if (op.kind == OpKind::collective) {
      t = take_nccl(std::string(engine::to_string(op.collective)));
    } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      t = take_nccl(op.kind == OpKind::send ? "send" : "recv");
      if (!t) t = take_nccl("sendrecv");
    }
    if (t)
      m.ops[id] = t;
    else if (op.kind != OpKind::copy)
      m.unmapped_ops.push_back(id);
  }
  for (std::size_t i = next_compute; i < compute.size(); ++i)
    m.unmapped_kernels.push_back(compute[i].name);
  for (const auto& [kind, list] : nccl)
    for (std::size_t i = next_nccl[kind]; i < list.size(); ++i)
      m.unmapped_kernels.push_back(list[i].name);
  return m;
}

Comparison compare_kineto(const engine::Schedule& s, const engine::Timeline& predicted,
                          const std::string& scenario, const KinetoMapping& m, std::size_t top) {
  Comparison c;
  c.scenario = scenario;
  double first = 1e300, last = 0;
  std::map<std::string, Figure> by_category;
  std::vector<OpError> errors;
  const engine::OpStore::Reader in_order = s.ops.reader();
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    if (op.rank != m.rank) continue;
    first = std::min(first, predicted.start[id].seconds());
    last = std::max(last, predicted.end[id].seconds());
    if (!m.ops[id]) continue;
    const double p = (predicted.end[id] - predicted.start[id]).seconds();
    const double measured = m.ops[id]->end_s - m.ops[id]->start_s;
    const std::string category(engine::to_string(op.category));
    Figure& f = by_category.try_emplace(category, Figure{category, 0, 0}).first->second;
    f.predicted_s += p;
    f.measured_s += measured;
    errors.push_back({id, op.rank, s.label(op), category, std::string(engine::to_string(op.kind)),
                      s.stream_names.at(op.stream), p, measured});
  }
  c.iteration = {"iteration", last > first ? last - first : 0.0, m.span_s};
  for (const auto& [name, f] : by_category)
    c.categories.push_back(f);
  c.ops_compared = errors.size();
  c.largest = largest_errors(std::move(errors), top);
  return c;
}

ordered_json kineto_ops_json(const engine::Schedule& s, const engine::Timeline& predicted,
                             const KinetoMapping& m) {
  ordered_json ops = ordered_json::array();
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    if (!m.ops[id]) continue;
    ordered_json o = op_json(s, id, predicted);
    o["start_s"] = m.ops[id]->start_s;
    o["end_s"] = m.ops[id]->end_s;
    ops.push_back(std::move(o));
  }
  return ordered_json{{"ops", std::move(ops)}};
}

}  // namespace clustersim::calibrate
