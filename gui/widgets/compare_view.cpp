#include "gui/widgets/compare_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QVBoxLayout>

namespace clustersim::gui {

CompareView::CompareView(QWidget* parent) : QWidget(parent), table_(new QTableView(this)) {
  table_->setModel(&model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  auto* buttons = new QHBoxLayout;
  auto button = [&](const QString& text, auto&& action) {
    auto* b = new QPushButton(text, this);
    connect(b, &QPushButton::clicked, this, action);
    buttons->addWidget(b);
  };
  auto pin = [this](bool side_b) {
    if (!current_) {
      emit message(tr("no run to pin yet: open a scenario first"));
      return;
    }
    ComparedResult r = result_of(*current_, current_origin_);
    side_b ? model_.set_b(std::move(r)) : model_.set_a(std::move(r));
  };
  button(tr("A ← this run"), [pin] { pin(false); });
  button(tr("B ← this run"), [pin] { pin(true); });
  button(tr("Open A…"), [this] { choose_file(false); });
  button(tr("Open B…"), [this] { choose_file(true); });
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(table_, 1);
}

void CompareView::set_current(PredictionPtr current, const QString& origin) {
  current_ = std::move(current);
  current_origin_ = origin;
}

bool CompareView::open_result(const QString& path, bool side_b, QString* error) {
  try {
    ComparedResult r = read_result_file(path);
    side_b ? model_.set_b(std::move(r)) : model_.set_a(std::move(r));
    return true;
  } catch (const ResultFileError& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

void CompareView::choose_file(bool side_b) {
  const QString path =
      QFileDialog::getOpenFileName(this, side_b ? tr("Open result B") : tr("Open result A"), {},
                                   tr("Result JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  QString error;
  if (!open_result(path, side_b, &error)) emit message(error);
}

}  // namespace clustersim::gui
