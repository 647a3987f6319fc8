// Stacked bars of a SegmentTable (a bar per rank or stage, a segment per column) painted with
// QPainter, so a thousand ranks draw as fast as eight: the limit as a dashed line with what
// exceeds it in red (memory over capacity), the marked row (the critical rank, the peak stage)
// flagged under its bar, a legend, and the row's figures on hover.
#pragma once

#include <QWidget>

#include "gui/models/segment_table.hpp"

namespace clustersim::gui {

class StackedBarsView : public QWidget {
  Q_OBJECT

 public:
  explicit StackedBarsView(QWidget* parent = nullptr);

  SegmentTableModel& model() { return model_; }
  const SegmentTableModel& model() const { return model_; }
  // The bar under a widget x position, if any.
  std::optional<int> row_at(int x) const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  QRectF plot_rect() const;
  double scale_max() const;

  SegmentTableModel model_;
};

}  // namespace clustersim::gui
