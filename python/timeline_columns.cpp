#include "python/timeline_columns.hpp"

#include <pybind11/numpy.h>

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::python {

namespace py = pybind11;

namespace {

// A numeric column: a NumPy array of T, written in place, or a list of Python numbers.
template <typename T>
class NumericColumn {
 public:
  NumericColumn(std::size_t n, bool numpy) : numpy_(numpy) {
    if (numpy)
      array_ = py::array_t<T>(static_cast<py::ssize_t>(n));
    else
      list_ = py::list(n);
  }
  void set(std::size_t i, T value) {
    if (numpy_)
      array_.mutable_data()[i] = value;
    else
      list_[i] = value;
  }
  py::object object() const { return numpy_ ? py::object(array_) : py::object(list_); }

 private:
  bool numpy_;
  py::array_t<T> array_;
  py::list list_;
};

}  // namespace

py::dict timeline_columns(const models::Prediction& prediction, bool numpy) {
  const engine::Schedule& schedule = prediction.output.built.schedule;
  const engine::Timeline& timeline = prediction.output.timeline;
  const std::size_t n = schedule.ops.size();
  py::list stream(n), kind(n), category(n), label(n), group(n);
  NumericColumn<std::int64_t> rank(n, numpy), peer(n, numpy);
  NumericColumn<double> start_s(n, numpy), end_s(n, numpy), flops(n, numpy);
  NumericColumn<std::uint64_t> bytes(n, numpy);
  // Repeated strings become one Python object each, not one per op.
  auto interned = [](std::vector<py::object>& cache, std::size_t index, std::string_view text) {
    if (cache.size() <= index) cache.resize(index + 1);
    if (!cache[index]) cache[index] = py::str(std::string(text));
    return cache[index];
  };
  std::vector<py::object> streams, kinds, categories, groups;  // null until first used
  const py::object no_group = py::str("");
  const engine::OpStore::Reader in_order = schedule.ops.reader();
  for (std::size_t i = 0; i < n; ++i) {
    const engine::Op op = in_order[static_cast<engine::OpId>(i)];
    rank.set(i, op.rank);
    stream[i] = interned(streams, op.stream, schedule.stream_names[op.stream]);
    kind[i] = interned(kinds, static_cast<std::size_t>(op.kind), engine::to_string(op.kind));
    category[i] =
        interned(categories, static_cast<std::size_t>(op.category), engine::to_string(op.category));
    label[i] = schedule.label(op);
    start_s.set(i, timeline.start[i].seconds());
    end_s.set(i, timeline.end[i].seconds());
    flops.set(i, schedule.flops(op));
    bytes.set(i, op.bytes);
    const bool collective = op.kind == engine::OpKind::collective;
    const bool point_to_point = op.kind == engine::OpKind::send || op.kind == engine::OpKind::recv;
    group[i] = collective
                   ? interned(groups, op.group_or_peer, schedule.groups[op.group_or_peer].name)
                   : no_group;
    peer.set(i, point_to_point ? static_cast<std::int64_t>(op.group_or_peer) : -1);
  }
  py::dict columns;
  columns["rank"] = rank.object();
  columns["stream"] = stream;
  columns["kind"] = kind;
  columns["category"] = category;
  columns["label"] = label;
  columns["start_s"] = start_s.object();
  columns["end_s"] = end_s.object();
  columns["flops"] = flops.object();
  columns["bytes"] = bytes.object();
  columns["group"] = group;
  columns["peer"] = peer.object();
  return columns;
}

}  // namespace clustersim::python
