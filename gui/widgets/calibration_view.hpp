// The calibration view (issue 12): a profile's measured bus bandwidth against message size beside
// its fit, log–log with Qt Charts, one collective and group shape at a time, and its GEMM
// measurements as a table.
#pragma once

#include <QWidget>

#include "gui/models/calibration_curves.hpp"

class QChartView;
class QComboBox;
class QLabel;
class QTableView;

namespace clustersim::gui {

class CalibrationView : public QWidget {
  Q_OBJECT

 public:
  explicit CalibrationView(QWidget* parent = nullptr);

  // Reads a profile; false with `error` set (the file and key at fault) when it cannot.
  bool open_profile(const QString& path, QString* error);
  const CalibrationData& data() const { return data_; }
  GemmTableModel& gemm_model() { return gemms_; }
  QChartView* chart_view() const { return chart_; }
  // Draws curve `index` of data().curves.
  void show_curve(int index);
  // The curve drawn, -1 for none.
  int current_curve() const { return shown_; }

 signals:
  void message(const QString& text);

 private:
  CalibrationData data_;
  GemmTableModel gemms_;
  int shown_ = -1;
  QLabel* title_;
  QComboBox* curve_;
  QChartView* chart_;
  QTableView* table_;
};

}  // namespace clustersim::gui
