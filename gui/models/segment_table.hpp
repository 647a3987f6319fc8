// A table of stacked bars: one row per bar (a rank, a pipeline stage), one column per segment
// (compute, tp-comm, ...; weights, optimizer, ...), in SI units. The breakdown and memory views
// draw it and export it as CSV; an optional limit (memory capacity) and a marked row (the critical
// rank) travel with it.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace clustersim::gui {

struct SegmentTable {
  QString title;
  QString unit;  // "s", "B"
  QStringList segments;
  QStringList rows;
  std::vector<std::vector<double>> values;  // [row][segment]
  std::optional<double> limit;              // a line every bar is measured against
  std::optional<int> marked_row;

  double row_total(int row) const;
};

class SegmentTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // The raw value (double) of a cell, DisplayRole being its formatted text.
  static constexpr int kValueRole = Qt::UserRole + 1;
  // On a row header: whether the row is the marked one (bool).
  static constexpr int kMarkedRole = Qt::UserRole + 2;

  explicit SegmentTableModel(QObject* parent = nullptr);

  void set_table(SegmentTable table);
  const SegmentTable& table() const { return table_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  // The segments, then their total.
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  SegmentTable table_;
};

// "1.25 ms", "3.4 GB": a value in SI units with a prefix.
QString format_si(double value, const QString& unit);

}  // namespace clustersim::gui
