#include "gui/widgets/calibration_view.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/calibration/json_fields.hpp"

namespace clustersim::gui {

CalibrationView::CalibrationView(QWidget* parent)
    : QWidget(parent),
      title_(
          new QLabel(tr("Open a calibration profile (clustersim calibrate … --out P.json)"), this)),
      curve_(new QComboBox(this)),
      chart_(new QChartView(this)),
      table_(new QTableView(this)) {
  auto* open = new QPushButton(tr("Open profile…"), this);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open calibration profile"), {},
                                                      tr("Profiles (*.json);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !open_profile(path, &error)) emit message(error);
  });
  connect(curve_, &QComboBox::currentIndexChanged, this, [this](int i) { show_curve(i); });
  chart_->setRenderHint(QPainter::Antialiasing);
  table_->setModel(&gemms_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  auto* top = new QHBoxLayout;
  top->addWidget(open);
  top->addWidget(curve_, 1);
  top->addWidget(title_, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(split, 1);
}

bool CalibrationView::open_profile(const QString& path, QString* error) {
  try {
    data_ = read_calibration_data(path);
  } catch (const engine::ProfileError& e) {
    if (error) *error = QStringLiteral("error: ") + QString::fromStdString(e.what());
    return false;
  }
  title_->setText(tr("%1, measured on %2: %3 collective fits, %4 GEMMs")
                      .arg(data_.origin, data_.gpu)
                      .arg(data_.curves.size())
                      .arg(data_.gemms.size()));
  gemms_.set_gemms(data_.gemms);
  curve_->blockSignals(true);
  curve_->clear();
  for (const CalibrationCurve& c : data_.curves)
    curve_->addItem(c.name);
  curve_->blockSignals(false);
  show_curve(0);
  return true;
}

void CalibrationView::show_curve(int index) {
  QChart* chart = chart_->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes())
    chart->removeAxis(axis);
  shown_ = -1;
  if (index < 0 || index >= static_cast<int>(data_.curves.size())) return;
  shown_ = index;
  const CalibrationCurve& c = data_.curves[static_cast<std::size_t>(index)];
  chart->setTitle(c.name);
  auto* x = new QLogValueAxis;
  auto* y = new QLogValueAxis;
  x->setTitleText(tr("message size (bytes)"));
  y->setTitleText(tr("bus bandwidth (GB/s)"));
  x->setLabelFormat(QStringLiteral("%.0e"));
  y->setLabelFormat(QStringLiteral("%.3g"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  auto* fitted = new QLineSeries;
  fitted->setName(tr("fit"));
  auto* measured = new QScatterSeries;
  measured->setName(tr("measured"));
  measured->setMarkerSize(7);
  double y_min = 0, y_max = 0;
  bool first = true;
  auto add = [&](QXYSeries* s, const QPointF& p) {
    const double gbps = p.y() / 1e9;
    if (!(gbps > 0)) return;  // a log axis has no room for 0
    s->append(p.x(), gbps);
    y_min = first ? gbps : std::min(y_min, gbps);
    y_max = first ? gbps : std::max(y_max, gbps);
    first = false;
  };
  for (const QPointF& p : c.fitted)
    add(fitted, p);
  for (const QPointF& p : c.measured)
    add(measured, p);
  for (QXYSeries* s : {static_cast<QXYSeries*>(fitted), static_cast<QXYSeries*>(measured)}) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  x->setRange(c.fitted.front().x() / 2, c.fitted.back().x() * 2);
  if (!first) y->setRange(y_min / 2, y_max * 2);
}

}  // namespace clustersim::gui
