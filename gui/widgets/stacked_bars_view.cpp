#include "gui/widgets/stacked_bars_view.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "gui/widgets/colors.hpp"

namespace clustersim::gui {

namespace {

constexpr int kLeftMargin = 80;
constexpr int kTopMargin = 48;
constexpr int kBottomMargin = 40;
constexpr int kRightMargin = 16;
constexpr QRgb kOverflowRed = 0xffd7191c;

}  // namespace

StackedBarsView::StackedBarsView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(300, 200);
  connect(&model_, &QAbstractItemModel::modelReset, this, qOverload<>(&QWidget::update));
}

QRectF StackedBarsView::plot_rect() const {
  return QRectF(kLeftMargin, kTopMargin, std::max(1, width() - kLeftMargin - kRightMargin),
                std::max(1, height() - kTopMargin - kBottomMargin));
}

double StackedBarsView::scale_max() const {
  const SegmentTable& table = model_.table();
  double most = table.limit.value_or(0.0);
  for (int r = 0; r < static_cast<int>(table.rows.size()); ++r)
    most = std::max(most, table.row_total(r));
  return most > 0 ? most * 1.05 : 1.0;
}

std::optional<int> StackedBarsView::row_at(int x) const {
  const int rows = static_cast<int>(model_.table().rows.size());
  const QRectF plot = plot_rect();
  if (rows == 0 || x < plot.left() || x >= plot.right()) return std::nullopt;
  return std::min(rows - 1, static_cast<int>((x - plot.left()) / plot.width() * rows));
}

void StackedBarsView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  const SegmentTable& table = model_.table();
  const QRectF plot = plot_rect();
  const QColor text = palette().text().color();
  painter.setPen(text);
  painter.drawText(QRectF(8, 4, width() - 16, 18), Qt::AlignLeft, table.title);

  // Legend.
  double x = 8;
  for (int s = 0; s < static_cast<int>(table.segments.size()); ++s) {
    painter.fillRect(QRectF(x, 26, 12, 12), segment_color(s));
    painter.drawText(QPointF(x + 16, 37), table.segments[s]);
    x += 24 + painter.fontMetrics().horizontalAdvance(table.segments[s]);
  }

  const double top = scale_max();
  auto y_of = [&](double value) { return plot.bottom() - value / top * plot.height(); };
  // Axis with four ticks.
  painter.setPen(palette().mid().color());
  for (int i = 0; i <= 4; ++i) {
    const double value = top * i / 4;
    const double y = y_of(value);
    painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    painter.setPen(text);
    painter.drawText(QRectF(0, y - 8, kLeftMargin - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                     format_si(value, table.unit));
    painter.setPen(palette().mid().color());
  }

  const int rows = static_cast<int>(table.rows.size());
  const double slot = rows > 0 ? plot.width() / rows : 0;
  const double bar = std::max(1.0, slot * 0.8);
  const double limit = table.limit.value_or(0.0);
  for (int r = 0; r < rows; ++r) {
    const double left = plot.left() + r * slot + (slot - bar) / 2;
    double base = 0;
    for (int s = 0; s < static_cast<int>(table.segments.size()); ++s) {
      const double value = table.values[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)];
      if (value <= 0) continue;
      painter.fillRect(QRectF(left, y_of(base + value), bar, y_of(base) - y_of(base + value)),
                       segment_color(s));
      base += value;
    }
    // What exceeds the limit, in red (memory only: a breakdown sums to its limit).
    if (table.unit == QStringLiteral("B") && limit > 0 && base > limit)
      painter.fillRect(QRectF(left, y_of(base), bar, y_of(limit) - y_of(base)),
                       QColor::fromRgb(kOverflowRed));
    if (table.marked_row == r) {
      painter.setPen(text);
      painter.setBrush(text);
      const QPointF tip(left + bar / 2, plot.bottom() + 4);
      painter.drawPolygon(QPolygonF{tip, tip + QPointF(-5, 9), tip + QPointF(5, 9)});
      painter.drawText(QRectF(tip.x() - 100, plot.bottom() + 14, 200, 16), Qt::AlignHCenter,
                       table.rows[r] + (table.unit == "s" ? " (critical)" : " (peak)"));
      painter.setBrush(Qt::NoBrush);
    }
  }
  if (limit > 0) {
    painter.setPen(QPen(text, 1, Qt::DashLine));
    painter.drawLine(QPointF(plot.left(), y_of(limit)), QPointF(plot.right(), y_of(limit)));
    painter.drawText(
        QPointF(plot.right() - 160, y_of(limit) - 4),
        (table.unit == "B" ? "capacity " : "iteration ") + format_si(limit, table.unit));
  }
}

bool StackedBarsView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const auto row = row_at(help->pos().x());
    if (!row) {
      QToolTip::hideText();
      return true;
    }
    QStringList lines{model_.table().rows[*row]};
    for (int c = 0; c < model_.columnCount(); ++c)
      lines << model_.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString() + ": " +
                   model_.data(model_.index(*row, c), Qt::DisplayRole).toString();
    QToolTip::showText(help->globalPos(), lines.join('\n'), this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace clustersim::gui
