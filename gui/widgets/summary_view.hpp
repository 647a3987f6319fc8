// The headline figures of a run (SummaryModel) as a table.
#pragma once

#include <QTableView>

#include "gui/models/summary_model.hpp"

namespace clustersim::gui {

class SummaryView : public QTableView {
  Q_OBJECT

 public:
  explicit SummaryView(QWidget* parent = nullptr);
  SummaryModel& summary() { return model_; }

 private:
  SummaryModel model_;
};

}  // namespace clustersim::gui
