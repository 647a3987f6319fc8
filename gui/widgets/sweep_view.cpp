#include "gui/widgets/sweep_view.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

namespace clustersim::gui {

SweepView::SweepView(QWidget* parent)
    : QWidget(parent),
      vary_(new QLineEdit(this)),
      second_vary_(new QLineEdit(this)),
      figure_(new QComboBox(this)),
      run_(new QPushButton(tr("Sweep"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      chart_(new QChartView(this)),
      table_(new QTableView(this)) {
  vary_->setPlaceholderText(QStringLiteral("parallel.bucket_mb=1..256x2"));
  second_vary_->setPlaceholderText(tr("second key (optional), e.g. parallel.tp=1,2,4"));
  for (const SweepFigure& f : sweep_figures())
    if (std::string(f.key) != "memory.fits") figure_->addItem(tr(f.label), QString(f.key));
  cancel_->setEnabled(false);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->chart()->setTitle(tr("Vary a key of the open scenario and press Sweep"));
  table_->setModel(&table_model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);

  auto* fields = new QHBoxLayout;
  fields->addWidget(vary_, 2);
  fields->addWidget(second_vary_, 2);
  fields->addWidget(figure_);
  fields->addWidget(run_);
  fields->addWidget(cancel_);
  fields->addWidget(progress_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(fields);
  layout->addWidget(split, 1);

  connect(run_, &QPushButton::clicked, this, [this] { run(vary_->text(), second_vary_->text()); });
  connect(cancel_, &QPushButton::clicked, &controller_, &SweepController::cancel);
  connect(figure_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(&controller_, &SweepController::progress, this, [this](int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
  });
  connect(&controller_, &SweepController::finished, this, &SweepView::on_finished);
  connect(&controller_, &SweepController::failed, this, [this](const QString& m) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    emit message(m);
  });
  connect(&controller_, &SweepController::cancelled, this, [this] {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    emit message(tr("sweep cancelled"));
  });
  connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
    const QStringList o = table_model_.overrides(index.row());
    if (!o.isEmpty()) emit open_point(o);
  });
}

bool SweepView::run(const QString& vary, const QString& second_vary) {
  vary_->setText(vary);
  second_vary_->setText(second_vary);
  const RunInput input = input_source_ ? input_source_() : RunInput{};
  if (input.path.isEmpty()) {
    emit message(tr("open a scenario first"));
    return false;
  }
  QString error;
  if (!controller_.start(input, {vary, second_vary}, &error)) {
    emit message(error);
    return false;
  }
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  emit message(tr("sweeping…"));
  return true;
}

void SweepView::on_finished(SweepResultPtr result) {
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  table_model_.set_result(result);
  std::size_t ran = 0;
  for (const auto& row : result->rows)
    ran += row.status == models::SweepStatus::ok;
  emit message(tr("sweep: %1 of %2 points ran").arg(ran).arg(result->rows.size()));
  redraw();
}

void SweepView::redraw() {
  const SweepResultPtr& result = table_model_.result();
  QChart* chart = chart_->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes())
    chart->removeAxis(axis);
  series_.clear();
  if (!result) return;
  const std::string figure = figure_->currentData().toString().toStdString();
  series_ = sweep_series(*result, figure);
  chart->setTitle(figure_->currentText() + tr(" against ") +
                  QString::fromStdString(result->axes[0].key));
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  x->setTitleText(QString::fromStdString(result->axes[0].key));
  y->setTitleText(figure_->currentText() + (figure.ends_with("_s") ? tr(" (s)") : QString()));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  bool first = true;
  for (std::size_t i = 0; i < series_.size(); ++i) {
    const SweepSeries& s = series_[i];
    auto* line = new QLineSeries;
    auto* dots = new QScatterSeries;
    line->setName(s.name.isEmpty() ? figure_->currentText() : s.name);
    dots->setMarkerSize(8);
    for (const QPointF& p : s.points) {
      line->append(p);
      dots->append(p);
      x_min = first ? p.x() : std::min(x_min, p.x());
      x_max = first ? p.x() : std::max(x_max, p.x());
      y_min = first ? p.y() : std::min(y_min, p.y());
      y_max = first ? p.y() : std::max(y_max, p.y());
      first = false;
    }
    for (QXYSeries* xy : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(dots)}) {
      chart->addSeries(xy);
      xy->attachAxis(x);
      xy->attachAxis(y);
    }
    dots->setColor(line->color());
    // A click on a point opens that point's plan.
    connect(dots, &QScatterSeries::clicked, this, [this, i](const QPointF& at) {
      const SweepSeries& clicked = series_[i];
      for (qsizetype k = 0; k < clicked.points.size(); ++k)
        if (clicked.points[k] == at) {
          emit open_point(table_model_.overrides(static_cast<int>(clicked.rows[k])));
          return;
        }
    });
  }
  // Room around the points; a flat curve still gets a visible span.
  const double dx = x_max > x_min ? (x_max - x_min) * 0.05 : 1.0;
  const double dy = y_max > y_min ? (y_max - y_min) * 0.1 : std::max(1e-12, y_max * 0.1);
  x->setRange(x_min - dx, x_max + dx);
  y->setRange(std::max(0.0, y_min - dy), y_max + dy);
  // The dots repeat their line's legend entry: only the lines are named.
  for (QAbstractSeries* s : chart->series())
    if (auto* dots = qobject_cast<QScatterSeries*>(s))
      for (QLegendMarker* marker : chart->legend()->markers(dots))
        marker->setVisible(false);
}

}  // namespace clustersim::gui
