#include "gui/widgets/summary_view.hpp"

#include <QHeaderView>

namespace clustersim::gui {

SummaryView::SummaryView(QWidget* parent) : QTableView(parent) {
  setModel(&model_);
  horizontalHeader()->setStretchLastSection(true);
  setWordWrap(true);
}

}  // namespace clustersim::gui
