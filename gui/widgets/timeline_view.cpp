#include "gui/widgets/timeline_view.hpp"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "gui/models/op_relations.hpp"
#include "gui/models/segment_table.hpp"
#include "gui/widgets/colors.hpp"

namespace clustersim::gui {

namespace {

// A ruler step of 1, 2 or 5 × 10^k seconds, at least `min_seconds`.
double nice_step(double min_seconds) {
  const double decade = std::pow(10.0, std::floor(std::log10(min_seconds)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= min_seconds) return m * decade;
  return 10.0 * decade;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(400, 200);
  setAutoFillBackground(false);
}

void TimelineView::set_presentation(PresentationPtr presentation) {
  presentation_ = std::move(presentation);
  selected_.reset();
  highlighted_.clear();
  zoom_history_.clear();
  refresh_rows();
  fit();
}

void TimelineView::set_ranks(std::vector<engine::Rank> ranks) {
  ranks_ = std::move(ranks);
  refresh_rows();
  update();
}

void TimelineView::set_folded(engine::Rank rank, bool folded) {
  folding_.set_folded(rank, folded);
  refresh_rows();
  update();
}

void TimelineView::fold_all(bool folded) {
  folding_.fold_all(folded);
  refresh_rows();
  update();
}

void TimelineView::refresh_rows() {
  rows_ = timeline_rows(store(), ranks_, folding_);
  first_lane_ = std::clamp(first_lane_, 0, std::max(0, static_cast<int>(rows_.size()) - 1));
}

const TimelineStore& TimelineView::store() const {
  static const TimelineStore kEmpty;
  return presentation_ ? presentation_->timeline : kEmpty;
}

double TimelineView::plot_width() const {
  return std::max(1, width() - kHeaderWidth);
}

void TimelineView::fit() {
  axis_.fit(0.0, static_cast<double>(store().makespan_ps()) * 1e-12, plot_width());
  fitted_ = true;
  update();
}

void TimelineView::zoom_at(double plot_x, double factor) {
  zoom_history_.push_back(axis_);
  axis_.zoom_at(plot_x, factor);
  fitted_ = false;
  update();
}

void TimelineView::undo_zoom() {
  if (zoom_history_.empty()) return;
  axis_ = zoom_history_.back();
  zoom_history_.pop_back();
  update();
}

void TimelineView::select_op(std::optional<engine::OpId> op) {
  selected_ = op;
  highlighted_.clear();
  if (op && presentation_) {
    const OpRelations relations = relations_of(presentation_->schedule(), *op);
    highlighted_ = relations.dependencies;
    highlighted_.insert(highlighted_.end(), relations.peers.begin(), relations.peers.end());
    if (relations.partner) highlighted_.push_back(*relations.partner);
    std::sort(highlighted_.begin(), highlighted_.end());
    emit op_selected(*op);
  }
  update();
}

void TimelineView::highlight_ops(OpList ops) {
  selected_.reset();
  highlighted_ = std::move(ops);
  update();
}

QString TimelineView::describe(engine::OpId id) const {
  if (!presentation_) return {};
  const auto& schedule = presentation_->schedule();
  const auto& timeline = presentation_->op_times();
  const engine::Op& op = schedule.ops[id];
  const double start = timeline.start[id].seconds();
  const double end = timeline.end[id].seconds();
  const double launch = timeline.launch[id].seconds();
  QStringList lines;
  lines << QString::fromStdString(schedule.label(op));
  lines << QStringLiteral("%1 · %2 · rank %3 · %4")
               .arg(QString::fromUtf8(engine::to_string(op.kind).data()),
                    QString::fromUtf8(engine::to_string(op.category).data()))
               .arg(op.rank)
               .arg(QString::fromStdString(schedule.stream_names[op.stream]));
  if (op.kind == engine::OpKind::compute)
    lines << QStringLiteral("FLOPs %1").arg(format_si(schedule.flops(op), QStringLiteral("FLOP")));
  lines << QStringLiteral("bytes %1").arg(format_si(static_cast<double>(op.bytes), "B"));
  if (const std::string how = transfer_text(schedule, timeline, id); !how.empty())
    lines << QString::fromStdString(how);
  lines << QStringLiteral("start %1 · duration %2")
               .arg(format_si(start, "s"), format_si(end - start, "s"));
  if (launch > start) lines << QStringLiteral("waiting %1").arg(format_si(launch - start, "s"));
  return lines.join('\n');
}

int TimelineView::visible_lane_count() const {
  return std::max(0, (height() - kRulerHeight) / kLaneHeight + 1);
}

std::optional<LaneRange> TimelineView::row_at(int y) const {
  if (y < kRulerHeight) return std::nullopt;
  const auto row = static_cast<std::size_t>(first_lane_ + (y - kRulerHeight) / kLaneHeight);
  return row < rows_.size() ? std::optional(rows_[row]) : std::nullopt;
}

std::optional<engine::OpId> TimelineView::op_at(QPoint position) const {
  const auto row = row_at(position.y());
  if (!row || position.x() < kHeaderWidth) return std::nullopt;
  const double time_s = axis_.to_time(position.x() - kHeaderWidth);
  const auto slack_ps = static_cast<std::int64_t>(axis_.seconds_per_pixel() * 1e12);
  return store().op_at(*row, static_cast<std::int64_t>(std::llround(time_s * 1e12)), slack_ps);
}

void TimelineView::scroll_lanes(int delta) {
  const int last = std::max(0, static_cast<int>(rows_.size()) - visible_lane_count() + 1);
  first_lane_ = std::clamp(first_lane_ + delta, 0, last);
  update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  paint_ruler(painter);
  const int count = visible_lane_count();
  for (int i = 0; i < count; ++i) {
    const auto row = static_cast<std::size_t>(first_lane_ + i);
    if (row >= rows_.size()) break;
    paint_row(painter, rows_[row], kRulerHeight + i * kLaneHeight);
  }
  if (banding_) {
    const int x0 = std::max(kHeaderWidth, std::min(drag_from_.x(), drag_to_.x()));
    const int x1 = std::max(drag_from_.x(), drag_to_.x());
    QColor band = palette().highlight().color();
    band.setAlpha(60);
    painter.fillRect(QRect(x0, kRulerHeight, x1 - x0, height() - kRulerHeight), band);
  }
}

void TimelineView::paint_ruler(QPainter& painter) const {
  painter.fillRect(QRect(0, 0, width(), kRulerHeight), palette().window());
  painter.setPen(palette().text().color());
  const double step = nice_step(axis_.seconds_per_pixel() * 90);
  const double first = std::ceil(axis_.to_time(0) / step) * step;
  for (double t = first; axis_.to_pixel(t) < plot_width(); t += step) {
    const int x = kHeaderWidth + static_cast<int>(std::lround(axis_.to_pixel(t)));
    painter.drawLine(x, kRulerHeight - 6, x, kRulerHeight);
    painter.drawText(x + 3, kRulerHeight - 8, format_si(t, QStringLiteral("s")));
  }
}

void TimelineView::paint_row(QPainter& painter, LaneRange row, int y) const {
  const Lane& lane = store().lane(row.first);
  const auto& schedule = presentation_->schedule();
  if (lane.rank % 2 == 1)  // a rank's streams share a shade
    painter.fillRect(QRect(0, y, width(), kLaneHeight), palette().alternateBase());
  painter.setPen(palette().text().color());
  // The triangle says what a click on the label does: ▸ unfolds, ▾ folds.
  const QString label =
      row.count > 1
          ? QStringLiteral("▸ r%1 (%2 streams)").arg(lane.rank).arg(row.count)
          : QStringLiteral("%1 r%2 %3")
                .arg(folding_.folded(lane.rank) ? QStringLiteral("▸") : QStringLiteral("▾"))
                .arg(lane.rank)
                .arg(QString::fromStdString(schedule.stream_names[lane.stream]));
  painter.drawText(QRect(4, y, kHeaderWidth - 8, kLaneHeight), Qt::AlignVCenter, label);

  painter.save();
  painter.setClipRect(QRect(kHeaderWidth, y, width() - kHeaderWidth, kLaneHeight));
  const double ps_per_pixel = axis_.seconds_per_pixel() * 1e12;
  const double origin_ps = axis_.origin_s() * 1e12;
  for (const Span& span : store().spans(row, axis_, plot_width())) {
    const double x0 = (static_cast<double>(span.start_ps) - origin_ps) / ps_per_pixel;
    const double x1 = (static_cast<double>(span.end_ps) - origin_ps) / ps_per_pixel;
    // Every span shows, however short: at least a pixel wide.
    const QRectF box(kHeaderWidth + x0, y + 1, std::max(1.0, x1 - x0), kLaneHeight - 2);
    const engine::Op& op = schedule.ops[span.op];
    painter.fillRect(box, category_color(op.category));
    const bool chosen = selected_ == span.op;
    if (chosen || std::binary_search(highlighted_.begin(), highlighted_.end(), span.op)) {
      painter.setPen(QPen(palette().highlight().color(), chosen ? 3 : 2));
      painter.drawRect(box);
    }
  }
  painter.restore();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ControlModifier) {
    zoom_at(event->position().x() - kHeaderWidth, std::pow(1.25, steps));
  } else {
    scroll_lanes(static_cast<int>(-steps * 3));
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  drag_from_ = drag_to_ = event->position().toPoint();
  dragging_ = event->button() == Qt::LeftButton;
  banding_ = dragging_ && (event->modifiers() & Qt::ShiftModifier);
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint at = event->position().toPoint();
  if (dragging_ && !banding_) {
    axis_.pan_pixels(at.x() - drag_to_.x());
    const int lanes = (drag_from_.y() - at.y()) / kLaneHeight;
    if (lanes != 0) {
      scroll_lanes(lanes);
      drag_from_.setY(at.y());
    }
    fitted_ = false;
  }
  drag_to_ = at;
  if (dragging_) update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  const QPoint at = event->position().toPoint();
  const bool moved = (at - drag_from_).manhattanLength() > 3;
  if (banding_ && moved) {
    const double x0 = std::min(drag_from_.x(), at.x()) - kHeaderWidth;
    const double x1 = std::max(drag_from_.x(), at.x()) - kHeaderWidth;
    zoom_history_.push_back(axis_);
    axis_.fit(axis_.to_time(x0), axis_.to_time(x1), plot_width());
    fitted_ = false;
  } else if (!moved && event->button() == Qt::LeftButton && at.x() < kHeaderWidth) {
    if (const auto row = row_at(at.y())) {
      const engine::Rank rank = store().lane(row->first).rank;
      set_folded(rank, !folding_.folded(rank));
    }
  } else if (!moved && event->button() == Qt::LeftButton) {
    select_op(op_at(at));
  }
  dragging_ = banding_ = false;
  update();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_F:
      fit();
      break;
    case Qt::Key_Backspace:
      undo_zoom();
      break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoom_at(plot_width() / 2, 2.0);
      break;
    case Qt::Key_Minus:
      zoom_at(plot_width() / 2, 0.5);
      break;
    default:
      QWidget::keyPressEvent(event);
  }
}

void TimelineView::resizeEvent(QResizeEvent*) {
  if (fitted_) fit();
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    if (const auto op = op_at(help->pos()))
      QToolTip::showText(help->globalPos(), describe(*op), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace clustersim::gui
