#include "gui/models/segment_table.hpp"

#include <cmath>
#include <numeric>

namespace clustersim::gui {

double SegmentTable::row_total(int row) const {
  const auto& cells = values[static_cast<std::size_t>(row)];
  return std::accumulate(cells.begin(), cells.end(), 0.0);
}

SegmentTableModel::SegmentTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SegmentTableModel::set_table(SegmentTable table) {
  beginResetModel();
  table_ = std::move(table);
  endResetModel();
}

int SegmentTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int SegmentTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.segments.size()) + 1;
}

QVariant SegmentTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const bool total = index.column() == static_cast<int>(table_.segments.size());
  const double value = total ? table_.row_total(index.row())
                             : table_.values[static_cast<std::size_t>(index.row())]
                                            [static_cast<std::size_t>(index.column())];
  switch (role) {
    case Qt::DisplayRole:
      return format_si(value, table_.unit);
    case kValueRole:
      return value;
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    default:
      return {};
  }
}

QVariant SegmentTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal) {
    if (role != Qt::DisplayRole || section < 0 || section >= columnCount()) return {};
    return section < static_cast<int>(table_.segments.size()) ? table_.segments[section]
                                                              : QStringLiteral("total");
  }
  if (section < 0 || section >= rowCount()) return {};
  if (role == Qt::DisplayRole) return table_.rows[section];
  if (role == kMarkedRole) return table_.marked_row == section;
  return {};
}

QString format_si(double value, const QString& unit) {
  static constexpr struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e12, "T"}, {1e9, "G"},  {1e6, "M"},  {1e3, "k"},
                   {1.0, ""},   {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}};
  const double magnitude = std::abs(value);
  for (const auto& p : kPrefixes)
    if (magnitude >= p.scale || p.scale == 1e-9)
      return magnitude == 0 ? QStringLiteral("0 %1").arg(unit)
                            : QStringLiteral("%1 %2%3")
                                  .arg(value / p.scale, 0, 'g', 4)
                                  .arg(QString::fromUtf8(p.prefix), unit);
  return {};
}

}  // namespace clustersim::gui
