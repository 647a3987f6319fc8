// The headline figures of a run as a one-column table (figure → value): iteration time,
// throughput, TFLOP/s and MFU, the bubble, exposed communication, memory with its verdict, the
// critical rank, and the run's notes. The summary view shows it and exports it as CSV.
#pragma once

#include <QAbstractTableModel>

#include "gui/models/run_controller.hpp"

namespace clustersim::gui {

class SummaryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  using QAbstractTableModel::QAbstractTableModel;
  void set_prediction(const PredictionPtr& prediction);
  // The value shown for a figure ("iteration time"), empty when none.
  QString value(const QString& figure) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QList<QPair<QString, QString>> rows_;
};

}  // namespace clustersim::gui
