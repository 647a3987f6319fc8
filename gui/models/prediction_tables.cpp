#include "gui/models/prediction_tables.hpp"

#include "models/metrics.hpp"

namespace clustersim::gui {

SegmentTable breakdown_table(const models::Prediction& prediction) {
  const auto& out = prediction.output;
  SegmentTable table;
  table.title = QStringLiteral("Where each rank's iteration goes");
  table.unit = QStringLiteral("s");
  table.segments = {"compute", "recompute", "dp-comm", "tp-comm", "pp-comm", "ep-comm", "cp-comm", "idle"};
  const auto per_rank =
      models::breakdown_per_rank(prediction.scenario, out.built.schedule, out.timeline);
  table.rows.reserve(static_cast<qsizetype>(per_rank.size()));
  table.values.reserve(per_rank.size());
  for (std::size_t rank = 0; rank < per_rank.size(); ++rank) {
    const auto& b = per_rank[rank];
    table.rows.push_back(QStringLiteral("rank %1").arg(rank));
    table.values.push_back(
        {b.compute, b.recompute, b.dp_comm, b.tp_comm, b.pp_comm, b.ep_comm, b.cp_comm, b.idle});
  }
  table.marked_row = static_cast<int>(out.result.critical_rank);
  table.limit = out.result.iteration_time_s;
  return table;
}

SegmentTable memory_table(const models::Prediction& prediction) {
  const auto& memory = prediction.output.result.memory;
  const auto& o = memory.overheads;
  SegmentTable table;
  table.title = QStringLiteral("Memory per GPU by pipeline stage");
  table.unit = QStringLiteral("B");
  table.segments = {"weights", "gradients", "optimizer", "activations", "buffers", "overheads"};
  // The same for every stage: context, workspaces and NCCL do not depend on the layers held.
  const double overheads = o.cuda_context + o.workspaces + o.nccl;
  for (std::size_t stage = 0; stage < memory.per_stage.size(); ++stage) {
    const auto& b = memory.per_stage[stage];
    table.rows.push_back(QStringLiteral("stage %1").arg(stage));
    table.values.push_back(
        {b.weights, b.gradients, b.optimizer, b.activations, b.buffers, overheads});
  }
  if (memory.per_stage.empty()) {
    const auto& b = memory.peak;
    table.rows.push_back(QStringLiteral("rank %1").arg(memory.peak_rank));
    table.values.push_back(
        {b.weights, b.gradients, b.optimizer, b.activations, b.buffers, overheads});
  }
  table.limit = memory.capacity;
  table.marked_row = memory.per_stage.empty() ? 0 : memory.peak_stage;
  return table;
}

}  // namespace clustersim::gui
