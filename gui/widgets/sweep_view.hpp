// The sweep view (issue 12): vary one or two keys of the open scenario (as `clustersim sweep
// --vary`), run the points in the background, plot a figure against the first key (a curve per
// value of the second) with Qt Charts, list every point, and open a point's plan by clicking it.
#pragma once

#include <QWidget>
#include <functional>

#include "gui/models/sweep_table.hpp"

class QChartView;
class QComboBox;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace clustersim::gui {

class SweepView : public QWidget {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);

  // Where the scenario to sweep comes from: the editor's text and overrides at the time Sweep is
  // pressed.
  void set_input_source(std::function<RunInput()> source) { input_source_ = std::move(source); }
  // Starts a sweep of the keys in the two fields; false with the reason shown when it cannot.
  bool run(const QString& vary, const QString& second_vary = {});
  SweepController& controller() { return controller_; }
  SweepTableModel& table_model() { return table_model_; }
  QChartView* chart_view() const { return chart_; }
  // The curves currently drawn (for tests).
  const std::vector<SweepSeries>& series() const { return series_; }

 signals:
  // Open the plan of a point: its --set overrides.
  void open_point(const QStringList& overrides);
  void message(const QString& text);

 private:
  void redraw();
  void on_finished(SweepResultPtr result);

  std::function<RunInput()> input_source_;
  SweepController controller_;
  SweepTableModel table_model_;
  std::vector<SweepSeries> series_;
  QLineEdit* vary_;
  QLineEdit* second_vary_;
  QComboBox* figure_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QChartView* chart_;
  QTableView* table_;
};

}  // namespace clustersim::gui
