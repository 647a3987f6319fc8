// The Gantt chart: one lane per (rank, stream), painted with QPainter from the TimelineStore.
// Ctrl+wheel zooms at the cursor, the wheel scrolls lanes, dragging pans, Shift+drag zooms to the
// band dragged over, Backspace undoes a zoom, F fits. Hovering shows the op; clicking highlights
// its dependencies, its collective's peers and its send/recv partner. Clicking a rank's label
// folds its streams into one row (or unfolds them).
#pragma once

#include <QWidget>
#include <optional>
#include <vector>

#include "gui/models/lane_folding.hpp"
#include "gui/models/link_transfers.hpp"
#include "gui/models/presentation.hpp"
#include "gui/models/time_axis.hpp"
#include "gui/models/timeline_store.hpp"

namespace clustersim::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void set_presentation(PresentationPtr presentation);
  const TimelineStore& store() const;
  const TimeAxis& axis() const { return axis_; }
  // Width of the drawing area (the widget less the lane labels), pixels.
  double plot_width() const;
  int plot_left() const { return kHeaderWidth; }

  // Shows only the lanes of `ranks` (sorted); empty: every rank.
  void set_ranks(std::vector<engine::Rank> ranks);
  // Rows shown, top to bottom: a lane of store(), or a folded rank's lanes.
  const std::vector<LaneRange>& shown_rows() const { return rows_; }
  // Folds `rank`'s streams into one row, or unfolds them; fold_all() does it for every rank.
  void set_folded(engine::Rank rank, bool folded);
  void fold_all(bool folded);
  const LaneFolding& folding() const { return folding_; }
  // The top of row `row` of shown_rows() (scrolled into view), in widget pixels.
  int row_top(int row) const { return kRulerHeight + (row - first_lane_) * kLaneHeight; }

  void fit();
  void zoom_at(double plot_x, double factor);
  void undo_zoom();
  void select_op(std::optional<engine::OpId> op);
  // Highlights `ops` (sorted) with nothing selected: the transfers over a topology link.
  void highlight_ops(OpList ops);
  std::optional<engine::OpId> selected_op() const { return selected_; }
  const std::vector<engine::OpId>& highlighted_ops() const { return highlighted_; }
  // The hover text of an op: name, kind, category, bytes, FLOPs, start, duration, waiting time.
  QString describe(engine::OpId op) const;
  // The op drawn at a widget position, if any.
  std::optional<engine::OpId> op_at(QPoint position) const;

 signals:
  void op_selected(quint32 op);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;

 private:
  static constexpr int kHeaderWidth = 120;
  static constexpr int kRulerHeight = 22;
  static constexpr int kLaneHeight = 14;

  std::optional<LaneRange> row_at(int y) const;
  int visible_lane_count() const;
  void scroll_lanes(int delta);
  void paint_ruler(QPainter& painter) const;
  void paint_row(QPainter& painter, LaneRange row, int y) const;

  PresentationPtr presentation_;
  TimeAxis axis_;
  std::vector<TimeAxis> zoom_history_;
  void refresh_rows();

  std::vector<engine::Rank> ranks_;  // the filter; empty for all
  LaneFolding folding_;
  std::vector<LaneRange> rows_;  // rows shown
  int first_lane_ = 0;           // first row shown
  bool fitted_ = false;
  std::optional<engine::OpId> selected_;
  std::vector<engine::OpId> highlighted_;  // sorted, for binary search while painting
  QPoint drag_from_;
  QPoint drag_to_;
  bool dragging_ = false;
  bool banding_ = false;
};

}  // namespace clustersim::gui
