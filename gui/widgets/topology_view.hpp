// The cluster graph by tier (TopologyLayout), painted with QPainter: vertices coloured by kind,
// cables by utilization (legend at the top), a cable's bytes and busy time on hover. Clicking a
// cable selects it (the window then selects the transfers that crossed it in the timeline).
#pragma once

#include <QWidget>
#include <optional>

#include "gui/models/presentation.hpp"
#include "gui/models/topology_layout.hpp"

namespace clustersim::gui {

class TopologyView : public QWidget {
  Q_OBJECT

 public:
  explicit TopologyView(QWidget* parent = nullptr);

  void set_presentation(PresentationPtr presentation);
  const TopologyLayout& layout_data() const { return layout_; }
  QString cables_as_csv() const;
  // Where a vertex is drawn at the widget's current size.
  QPointF position_of(engine::VertexId vertex) const;
  // The cable drawn within a few pixels of `point`, if any (index into layout_data().cables).
  std::optional<std::size_t> cable_at(QPointF point) const;
  // Selects a cable (index into layout_data().cables) or none, and says so (cable_selected).
  void select_cable(std::optional<std::size_t> cable);
  std::optional<std::size_t> selected_cable() const { return selected_; }

 signals:
  // -1: none.
  void cable_selected(int cable);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  PresentationPtr presentation_;
  TopologyLayout layout_;
  std::vector<int> row_of_tier_;  // drawn row of each tier, -1 when empty
  int rows_ = 0;
  std::optional<std::size_t> selected_;
};

// The colour of a utilization in [0, 1]: grey for idle links, then yellow → orange → vermillion.
QColor utilization_color(double utilization);

}  // namespace clustersim::gui
