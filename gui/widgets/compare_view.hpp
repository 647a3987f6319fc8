// The compare view (issue 12): CompareModel as a table, with buttons that pin the current run
// as A or B and that open a result JSON file (what `clustersim run --json` wrote) as either.
#pragma once

#include <QTableView>
#include <QWidget>

#include "gui/models/compare_model.hpp"

class QLabel;

namespace clustersim::gui {

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);
  CompareModel& model() { return model_; }
  QTableView* table() const { return table_; }

  // The run the "this run" buttons pin (null: none yet).
  void set_current(PredictionPtr current, const QString& origin);
  // Reads a result JSON into side A or B; false with `error` set when it cannot be compared.
  bool open_result(const QString& path, bool side_b, QString* error);

 signals:
  void message(const QString& text);

 private:
  void choose_file(bool side_b);

  CompareModel model_;
  QTableView* table_;
  PredictionPtr current_;
  QString current_origin_;
};

}  // namespace clustersim::gui
