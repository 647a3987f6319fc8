#include "python/timeline_columns.hpp"

#include <string>
#include <vector>

namespace clustersim::python {

namespace py = pybind11;

py::dict timeline_columns(const models::Prediction& prediction) {
  const engine::Schedule& schedule = prediction.output.built.schedule;
  const engine::Timeline& timeline = prediction.output.timeline;
  const std::size_t n = schedule.ops.size();
  py::list rank(n), stream(n), kind(n), category(n), label(n), start_s(n), end_s(n), flops(n),
      bytes(n), group(n), peer(n);
  // Repeated strings become one Python object each, not one per op.
  auto interned = [](std::vector<py::object>& cache, std::size_t index, std::string_view text) {
    if (cache.size() <= index) cache.resize(index + 1);
    if (!cache[index]) cache[index] = py::str(std::string(text));
    return cache[index];
  };
  std::vector<py::object> streams, kinds, categories, groups;  // null until first used
  const py::object no_group = py::str("");
  for (std::size_t i = 0; i < n; ++i) {
    const engine::Op& op = schedule.ops[i];
    rank[i] = op.rank;
    stream[i] = interned(streams, op.stream, schedule.stream_names[op.stream]);
    kind[i] = interned(kinds, static_cast<std::size_t>(op.kind), engine::to_string(op.kind));
    category[i] =
        interned(categories, static_cast<std::size_t>(op.category), engine::to_string(op.category));
    label[i] = schedule.label(op);
    start_s[i] = timeline.start[i].seconds();
    end_s[i] = timeline.end[i].seconds();
    flops[i] = op.kind == engine::OpKind::compute ? op.flops : 0.0;
    bytes[i] = op.bytes;
    const bool collective = op.kind == engine::OpKind::collective;
    const bool point_to_point = op.kind == engine::OpKind::send || op.kind == engine::OpKind::recv;
    group[i] = collective
                   ? interned(groups, op.group_or_peer, schedule.groups[op.group_or_peer].name)
                   : no_group;
    peer[i] = point_to_point ? static_cast<long>(op.group_or_peer) : -1L;
  }
  py::dict columns;
  columns["rank"] = rank;
  columns["stream"] = stream;
  columns["kind"] = kind;
  columns["category"] = category;
  columns["label"] = label;
  columns["start_s"] = start_s;
  columns["end_s"] = end_s;
  columns["flops"] = flops;
  columns["bytes"] = bytes;
  columns["group"] = group;
  columns["peer"] = peer;
  return columns;
}

}  // namespace clustersim::python
