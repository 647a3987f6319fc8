#include "gui/models/calibration_curves.hpp"

#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "calibrate/profile.hpp"
#include "gui/models/segment_table.hpp"

namespace clustersim::gui {

double fitted_busbw(const engine::CollectiveFit& fit, double bytes) {
  return bytes * fit.bus_factor / fit.time_seconds(bytes);
}

CalibrationData read_calibration_data(const QString& path) {
  const calibrate::Profile p = calibrate::read_profile(path.toStdString());
  CalibrationData d;
  d.origin = QFileInfo(path).fileName();
  d.gpu = QString::fromStdString(p.provenance.gpu);
  d.gemms = p.measurements.gemms;
  for (const engine::CollectiveFit& fit : p.collectives.fits()) {
    CalibrationCurve c;
    const std::string type(engine::to_string(fit.type));
    c.name = QString::fromStdString(type + ", " + fit.shape.str());
    for (const calibrate::CollectiveMeasurement& m : p.measurements.collectives)
      if (m.collective == type && m.ranks == fit.shape.ranks && m.nodes == fit.shape.nodes &&
          m.bytes > 0)
        c.measured.push_back({m.bytes, m.busbw});
    std::sort(c.measured.begin(), c.measured.end(),
              [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    const double lo = std::max(1.0, fit.ranges.front().min_bytes);
    const double hi = std::max(lo * 2, fit.ranges.back().max_bytes);
    constexpr int kSamples = 48;
    for (int i = 0; i < kSamples; ++i) {
      const double bytes = lo * std::pow(hi / lo, static_cast<double>(i) / (kSamples - 1));
      c.fitted.push_back({bytes, fitted_busbw(fit, bytes)});
    }
    d.curves.push_back(std::move(c));
  }
  return d;
}

bool is_calibration_profile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return false;
  const auto j = nlohmann::json::parse(file.readAll().toStdString(), nullptr, false);
  return j.is_object() && j.value("format", std::string()) == models::kProfileFormat;
}

QString curve_csv(const CalibrationCurve& curve) {
  QString csv = QStringLiteral("series,bytes,busbw_bytes_per_s\n");
  for (const auto& [name, points] :
       {std::pair{"measured", &curve.measured}, {"fit", &curve.fitted}})
    for (const QPointF& p : *points)
      csv += QStringLiteral("%1,%2,%3\n")
                 .arg(QLatin1String(name))
                 .arg(p.x(), 0, 'g', 10)
                 .arg(p.y(), 0, 'g', 10);
  return csv;
}

void GemmTableModel::set_gemms(std::vector<calibrate::GemmMeasurement> gemms) {
  beginResetModel();
  gemms_ = std::move(gemms);
  endResetModel();
}

int GemmTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(gemms_.size());
}

int GemmTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 6;
}

QVariant GemmTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole || index.row() >= rowCount()) return {};
  const calibrate::GemmMeasurement& g = gemms_[static_cast<std::size_t>(index.row())];
  switch (index.column()) {
    case 0:
      return QString::number(g.m);
    case 1:
      return QString::number(g.n);
    case 2:
      return QString::number(g.k);
    case 3:
      return QString::fromStdString(g.dtype);
    case 4:
      return format_si(g.seconds, QStringLiteral("s"));
    case 5:
      return QString::number(g.flops_per_s() / 1e12, 'f', 1);
    default:
      return {};
  }
}

QVariant GemmTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return QString::number(section);
  static const char* kHeaders[] = {"m", "n", "k", "dtype", "time", "TFLOP/s"};
  return section >= 0 && section < 6 ? QVariant(QString::fromLatin1(kHeaders[section]))
                                     : QVariant();
}

}  // namespace clustersim::gui
