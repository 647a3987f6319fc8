// A calibration profile (docs/calibration.md) as the calibration view draws it (issue 12
// "Calibration"): for every fitted collective and group shape, the bus bandwidth measured at
// each message size beside the fit's (α + bytes·bus_factor/busbw per size range), for a log–log
// plot; and the GEMM measurements as a table.
#pragma once

#include <QAbstractTableModel>
#include <QPointF>
#include <QString>
#include <QVector>
#include <vector>

#include "calibrate/measurements.hpp"
#include "engine/calibration/collective_profile.hpp"

namespace clustersim::gui {

struct CalibrationCurve {
  QString name;               // "all_reduce, 8 ranks on 1 node"
  QVector<QPointF> measured;  // (bytes, bus bandwidth in bytes/s), by size
  QVector<QPointF> fitted;    // the fit at 48 sizes, log-spaced over its ranges
};

struct CalibrationData {
  QString origin;  // the file's name
  QString gpu;     // what it was measured on
  std::vector<CalibrationCurve> curves;
  std::vector<calibrate::GemmMeasurement> gemms;
};

// The fit's bus bandwidth at `bytes`: bytes × bus_factor / (α + bytes × bus_factor / busbw) of
// the range holding `bytes` (engine::CollectiveFit::time_seconds).
double fitted_busbw(const engine::CollectiveFit& fit, double bytes);

// Reads a profile file; throws engine::ProfileError naming the file and the key.
CalibrationData read_calibration_data(const QString& path);
// Whether `path` is a JSON document whose "format" is a calibration profile's (File ▸ Open tells
// profiles from result JSON so).
bool is_calibration_profile(const QString& path);
// A curve's points as CSV: series (measured | fit), bytes, bus bandwidth in bytes/s.
QString curve_csv(const CalibrationCurve& curve);

// One row per GEMM measurement: m, n, k, dtype, time, TFLOP/s.
class GemmTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  using QAbstractTableModel::QAbstractTableModel;
  void set_gemms(std::vector<calibrate::GemmMeasurement> gemms);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<calibrate::GemmMeasurement> gemms_;
};

}  // namespace clustersim::gui
