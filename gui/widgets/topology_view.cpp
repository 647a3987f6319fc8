#include "gui/widgets/topology_view.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "gui/models/segment_table.hpp"

namespace clustersim::gui {

namespace {

constexpr int kTopologyTopMargin = 56;
constexpr int kSideMargin = 20;
constexpr double kHoverPixels = 4.0;

QColor kind_color(engine::VertexKind kind) {
  // Okabe–Ito, in tier order.
  static constexpr QRgb kColors[] = {0xff000000, 0xffcc79a7, 0xff56b4e9, 0xff009e73,
                                     0xff999999, 0xffe69f00, 0xffd55e00, 0xff0072b2};
  return QColor::fromRgb(kColors[tier_of(kind)]);
}

double distance_to_segment(QPointF p, QPointF a, QPointF b) {
  const QPointF ab = b - a;
  const double length2 = QPointF::dotProduct(ab, ab);
  const double t =
      length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length2, 0.0, 1.0) : 0.0;
  const QPointF nearest = a + t * ab;
  return std::hypot(p.x() - nearest.x(), p.y() - nearest.y());
}

}  // namespace

QColor utilization_color(double utilization) {
  if (utilization <= 0) return QColor::fromRgb(0xffbbbbbb);
  const QColor low = QColor::fromRgb(0xfff0e442), mid = QColor::fromRgb(0xffe69f00),
               high = QColor::fromRgb(0xffd55e00);
  const double u = std::clamp(utilization, 0.0, 1.0);
  const auto mix = [](const QColor& a, const QColor& b, double f) {
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * f),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * f),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * f));
  };
  return u < 0.5 ? mix(low, mid, u / 0.5) : mix(mid, high, (u - 0.5) / 0.5);
}

TopologyView::TopologyView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(300, 200);
}

void TopologyView::set_presentation(PresentationPtr presentation) {
  presentation_ = std::move(presentation);
  layout_ = {};
  row_of_tier_.assign(kNumTiers, -1);
  rows_ = 0;
  selected_.reset();
  if (presentation_ && presentation_->prediction) {
    const auto& p = *presentation_->prediction;
    layout_ = layout_topology(p.output.topology, p.output.timeline.link_bytes,
                              p.output.result.iteration_time_s, p.scenario.simulation.iterations);
    for (int tier = 0; tier < kNumTiers; ++tier)
      if (layout_.tier_sizes[static_cast<std::size_t>(tier)] > 0)
        row_of_tier_[static_cast<std::size_t>(tier)] = rows_++;
  }
  update();
}

QString TopologyView::cables_as_csv() const {
  return presentation_ && presentation_->prediction
             ? cables_csv(presentation_->prediction->output.topology, layout_)
             : QString();
}

QPointF TopologyView::position_of(engine::VertexId vertex) const {
  const PlacedVertex& v = layout_.vertices[vertex];
  const double row_height = (height() - kTopologyTopMargin - 20.0) / std::max(1, rows_);
  const int row = row_of_tier_[static_cast<std::size_t>(v.tier)];
  return {kSideMargin + v.x * (width() - 2.0 * kSideMargin),
          kTopologyTopMargin + (row + 0.5) * row_height};
}

std::optional<std::size_t> TopologyView::cable_at(QPointF point) const {
  std::optional<std::size_t> best;
  double best_distance = kHoverPixels;
  for (std::size_t i = 0; i < layout_.cables.size(); ++i) {
    const auto& cable = layout_.cables[i];
    const double d = distance_to_segment(point, position_of(cable.a), position_of(cable.b));
    if (d <= best_distance) {
      best = i;
      best_distance = d;
    }
  }
  return best;
}

void TopologyView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  painter.setPen(palette().text().color());
  if (presentation_ && !presentation_->prediction)
    painter.drawText(QPointF(8, 16),
                     QStringLiteral("A trace keeps no topology: open its scenario"));
  if (!presentation_ || !presentation_->prediction) return;
  const auto& topology = presentation_->prediction->output.topology;
  painter.drawText(QPointF(8, 16), QStringLiteral("Topology: %1 vertices, %2 cables")
                                       .arg(topology.num_vertices())
                                       .arg(layout_.cables.size()));
  // Legend: kinds, then the utilization scale.
  double x = 8;
  for (const auto kind :
       {engine::VertexKind::core_switch, engine::VertexKind::spine_switch,
        engine::VertexKind::leaf_switch, engine::VertexKind::nic, engine::VertexKind::cpu,
        engine::VertexKind::pcie_switch, engine::VertexKind::nvswitch, engine::VertexKind::gpu}) {
    // Core switches exist only in a fat tree of three levels: named only where there are some.
    const auto tier = static_cast<std::size_t>(tier_of(kind));
    if (kind == engine::VertexKind::core_switch &&
        (tier >= layout_.tier_sizes.size() || layout_.tier_sizes[tier] == 0))
      continue;
    const auto name = engine::to_string(kind);
    const QString label = QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    painter.fillRect(QRectF(x, 24, 10, 10), kind_color(kind));
    painter.drawText(QPointF(x + 14, 34), label);
    x += 26 + painter.fontMetrics().horizontalAdvance(label);
  }
  x += 10;
  painter.drawText(QPointF(x, 34), QStringLiteral("link utilization 0"));
  x += 4 + painter.fontMetrics().horizontalAdvance(QStringLiteral("link utilization 0"));
  for (int i = 0; i <= 10; ++i)
    painter.fillRect(QRectF(x + i * 8, 24, 8, 10), utilization_color(i / 10.0));
  painter.drawText(QPointF(x + 92, 34), QStringLiteral("100 %"));

  // Cables, idle first so busy ones are drawn on top.
  std::vector<std::size_t> order(layout_.cables.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return layout_.cables[a].utilization < layout_.cables[b].utilization;
  });
  painter.setRenderHint(QPainter::Antialiasing, layout_.cables.size() < 5000);
  for (const std::size_t i : order) {
    const auto& cable = layout_.cables[i];
    painter.setPen(QPen(utilization_color(cable.utilization), cable.utilization > 0 ? 1.5 : 0.7));
    painter.drawLine(position_of(cable.a), position_of(cable.b));
  }
  if (selected_) {
    const auto& cable = layout_.cables[*selected_];
    painter.setPen(QPen(palette().highlight().color(), 4));
    painter.drawLine(position_of(cable.a), position_of(cable.b));
  }
  // Vertices: boxes as wide as their tier allows.
  painter.setPen(Qt::NoPen);
  for (const PlacedVertex& v : layout_.vertices) {
    const double slot =
        (width() - 2.0 * kSideMargin) / layout_.tier_sizes[static_cast<std::size_t>(v.tier)];
    const double size = std::clamp(slot * 0.6, 2.0, 14.0);
    const QPointF at = position_of(v.id);
    painter.fillRect(QRectF(at.x() - size / 2, at.y() - size / 2, size, size),
                     kind_color(topology.vertex(v.id).kind));
  }
}

void TopologyView::select_cable(std::optional<std::size_t> cable) {
  selected_ = cable;
  update();
  emit cable_selected(cable ? static_cast<int>(*cable) : -1);
}

void TopologyView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && presentation_ && presentation_->prediction)
    select_cable(cable_at(event->position()));
}

bool TopologyView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && presentation_ && presentation_->prediction) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const auto& topology = presentation_->prediction->output.topology;
    if (const auto i = cable_at(help->pos())) {
      const auto& cable = layout_.cables[*i];
      const auto& link = topology.link(cable.links.front());
      QToolTip::showText(
          help->globalPos(),
          QStringLiteral("%1 ↔ %2\n%3 per direction\n%4 per iteration, busy %5 (%6 %)")
              .arg(QString::fromStdString(topology.vertex(cable.a).name),
                   QString::fromStdString(topology.vertex(cable.b).name),
                   format_si(link.bandwidth.bytes_per_second(), "B/s"), format_si(cable.bytes, "B"),
                   format_si(cable.busy_s, "s"))
              .arg(cable.utilization * 100, 0, 'f', 1),
          this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace clustersim::gui
