#include "gui/models/summary_model.hpp"

#include "gui/models/segment_table.hpp"

namespace clustersim::gui {

void SummaryModel::set_prediction(const PredictionPtr& prediction) {
  beginResetModel();
  rows_.clear();
  if (prediction) {
    const auto& r = prediction->output.result;
    const auto percent = [](double share) { return QString::number(share * 100, 'f', 1) + " %"; };
    // A Chakra workload names no batch, model or memory: those figures are unknown, not zero.
    const QString unknown = "unknown (Chakra traces)";
    const auto known = [&](const QString& figure) { return r.from_traces ? unknown : figure; };
    rows_ = {
        {"scenario", QString::fromStdString(r.scenario)},
        {"GPUs", QString::number(r.world_size)},
        {"iteration time", format_si(r.iteration_time_s, "s")},
        {"tokens/s", known(QString::number(r.tokens_per_s, 'f', 0))},
        {"samples/s", known(QString::number(r.samples_per_s, 'f', 2))},
        {"TFLOP/s per GPU", QString::number(r.tflops_per_gpu, 'f', 1)},
        {"MFU", known(percent(r.mfu))},
        {"pipeline bubble", percent(r.bubble_fraction)},
        {"exposed communication", format_si(r.exposed_comm_s.total, "s")},
        {"communication hidden", percent(r.comm_overlap_fraction)},
        {"critical rank", QString::number(r.critical_rank)},
        {"memory per GPU",
         known(format_si(r.memory.total(), "B") + " of " + format_si(r.memory.capacity, "B"))},
        {"memory verdict", known(QString::fromUtf8(models::to_string(r.memory.verdict()).data()))},
        {"network model", QString::fromStdString(r.network_model)},
        {"events", QString::number(r.events)},
    };
    // Start-up's own peak when the model is built whole on the GPU (docs/memory.md "Start-up").
    if (!r.from_traces && r.memory.startup_peak > 0)
      rows_.push_back({"memory at start-up", format_si(r.memory.startup_total(), "B") + " of " +
                                                 format_si(r.memory.capacity, "B")});
    // What would make a plan fit (docs/memory.md "Verdict and suggestions"), as --set flags.
    if (!r.from_traces) {
      const auto fix = [](const std::string& flags, double bytes, const std::string& verdict) {
        return QString::fromStdString(flags) + ": " + format_si(bytes, "B") + " (" +
               QString::fromStdString(verdict) + ")";
      };
      for (const auto& x : r.memory.suggestions)
        rows_.push_back({"to fit, alone", fix("--set " + x.change, x.peak_bytes, x.verdict)});
      if (const auto& c = r.memory.combined)
        rows_.push_back({"to fit, together", fix(c->as_set_flags(), c->peak_bytes, c->verdict)});
    }
    for (const std::string& note : r.notes)
      rows_.push_back({"note", QString::fromStdString(note)});
  }
  endResetModel();
}

QString SummaryModel::value(const QString& figure) const {
  for (const auto& [name, value] : rows_)
    if (name == figure) return value;
  return {};
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int SummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1;
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole || index.row() >= rowCount()) return {};
  return rows_[index.row()].second;
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal) return section == 0 ? QVariant("value") : QVariant();
  return section < rowCount() ? QVariant(rows_[section].first) : QVariant();
}

}  // namespace clustersim::gui
