#include "gui/widgets/main_window.hpp"

#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "gui/models/csv.hpp"
#include "gui/models/presentation.hpp"
#include "gui/models/rank_filter.hpp"
#include "gui/widgets/calibration_view.hpp"
#include "gui/widgets/compare_view.hpp"
#include "gui/widgets/export.hpp"
#include "gui/widgets/scenario_editor.hpp"
#include "gui/widgets/stacked_bars_view.hpp"
#include "gui/widgets/summary_view.hpp"
#include "gui/widgets/sweep_view.hpp"
#include "gui/widgets/timeline_view.hpp"
#include "gui/widgets/topology_view.hpp"

namespace clustersim::gui {

namespace {

constexpr int kMaxRecentFiles = 10;
const QString kRecentKey = QStringLiteral("recent_files");

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      editor_(new ScenarioEditor(this)),
      tabs_(new QTabWidget(this)),
      timeline_(new TimelineView(this)),
      breakdown_(new StackedBarsView(this)),
      memory_(new StackedBarsView(this)),
      summary_(new SummaryView(this)),
      topology_(new TopologyView(this)),
      compare_(new CompareView(this)),
      sweep_(new SweepView(this)),
      calibration_(new CalibrationView(this)),
      status_(new QLabel(this)),
      progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)) {
  setWindowTitle(QStringLiteral("clustersim"));
  setAcceptDrops(true);
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(breakdown_, tr("Breakdown"));
  tabs_->addTab(memory_, tr("Memory"));
  tabs_->addTab(topology_, tr("Topology"));
  tabs_->addTab(summary_, tr("Summary"));
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->addTab(sweep_, tr("Sweep"));
  tabs_->addTab(calibration_, tr("Calibration"));
  setCentralWidget(tabs_);
  connect(compare_, &CompareView::message, this, [this](const QString& m) { status_->setText(m); });
  connect(sweep_, &SweepView::message, this, [this](const QString& m) { status_->setText(m); });
  connect(calibration_, &CalibrationView::message, this,
          [this](const QString& m) { status_->setText(m); });
  sweep_->set_input_source([this] { return editor_->input(); });
  // A clicked sweep point becomes the form's overrides, which re-runs the scenario with them.
  connect(sweep_, &SweepView::open_point, this, [this](const QStringList& overrides) {
    for (const QString& o : overrides) {
      const auto eq = o.indexOf('=');
      editor_->set_override(o.left(eq), o.mid(eq + 1));
    }
    status_->setText(tr("opened %1").arg(overrides.join(QStringLiteral(", "))));
  });

  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName(QStringLiteral("scenario_dock"));
  dock->setWidget(editor_);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  progress_->setRange(0, 100);
  progress_->setMaximumWidth(200);
  progress_->hide();
  cancel_->hide();
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  status_->setText(tr("Open a scenario (File ▸ Open, or drop a .yaml here)"));

  connect(cancel_, &QPushButton::clicked, &runner_, &RunController::cancel);
  connect(editor_, &ScenarioEditor::edited, this, [this] {
    if (!editor_->path().isEmpty()) runner_.request(editor_->input());
  });
  connect(&runner_, &RunController::started, this, [this] {
    progress_->setValue(0);
    progress_->show();
    cancel_->show();
    status_->setText(tr("running…"));
  });
  connect(&runner_, &RunController::progress, this,
          [this](quint64, const QString& phase, double fraction) {
            progress_->setValue(static_cast<int>(fraction * 100));
            status_->setText(phase + QStringLiteral("…"));
          });
  connect(&runner_, &RunController::finished, this, &MainWindow::on_finished);
  connect(topology_, &TopologyView::cable_selected, this, &MainWindow::on_cable_selected);
  connect(&transfers_, &LinkTransferSearch::found, this,
          [this](const std::vector<engine::LinkId>& links, const OpList& ops) {
            timeline_->highlight_ops(ops);
            status_->setText(tr("%1 communication ops crossed %2: highlighted in the timeline")
                                 .arg(ops.size())
                                 .arg(cable_name(links.front())));
          });
  connect(&runner_, &RunController::failed, this, &MainWindow::on_failed);
  connect(&runner_, &RunController::cancelled, this,
          [this] { status_->setText(tr("cancelled; the last result stays shown")); });
  connect(&runner_, &RunController::idle, this, [this] {
    progress_->hide();
    cancel_->hide();
  });

  build_menus();
  build_rank_filter();
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window_state")).toByteArray());
}

MainWindow::~MainWindow() {
  runner_.cancel();
  runner_.wait_idle();
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::choose_and_open);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  refresh_recent_menu();
  file->addAction(tr("&Save"), QKeySequence::Save, this, [this] {
    if (!editor_->path().isEmpty()) save_file(editor_->path());
  });
  file->addAction(tr("Save &as…"), QKeySequence::SaveAs, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), editor_->path(),
                                                      tr("Scenarios (*.yaml *.yml)"));
    if (!path.isEmpty()) save_file(path);
  });
  file->addSeparator();
  file->addAction(tr("Export view as &PNG…"), this,
                  [this] { choose_and_export_view(QStringLiteral("PNG (*.png)")); });
  file->addAction(tr("Export view as S&VG…"), this,
                  [this] { choose_and_export_view(QStringLiteral("SVG (*.svg)")); });
  file->addAction(tr("Export view data as &CSV…"), this,
                  [this] { choose_and_export_view(QStringLiteral("CSV (*.csv)")); });
  file->addAction(tr("Write result &JSON…"), this, [this] { choose_and_write_run(false); });
  file->addAction(tr("Write &trace…"), this, [this] { choose_and_write_run(true); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit timeline"), QKeySequence(Qt::Key_F), timeline_, &TimelineView::fit);
  view->addAction(tr("&Undo zoom"), QKeySequence(Qt::Key_Backspace), timeline_,
                  &TimelineView::undo_zoom);
  view->addSeparator();
  // A rank's label in the timeline folds that rank alone.
  view->addAction(tr("F&old every rank's streams"), this, [this] { timeline_->fold_all(true); });
  view->addAction(tr("U&nfold every rank's streams"), this, [this] { timeline_->fold_all(false); });
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("Run &now"), QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
    if (!editor_->path().isEmpty()) runner_.start(editor_->input());
  });
  run->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), &runner_, &RunController::cancel);
}

void MainWindow::build_rank_filter() {
  auto* bar = addToolBar(tr("Timeline ranks"));
  bar->setObjectName(QStringLiteral("rank_filter"));
  rank_scope_ = new QComboBox(bar);
  rank_scope_->addItem(tr("all ranks"), static_cast<int>(RankScope::all));
  rank_scope_->addItem(tr("pipeline stage of rank"), static_cast<int>(RankScope::stage));
  rank_scope_->addItem(tr("data-parallel replica of rank"), static_cast<int>(RankScope::replica));
  rank_scope_->addItem(tr("node of rank"), static_cast<int>(RankScope::node));
  rank_ = new QSpinBox(bar);
  rank_->setRange(0, 0);
  bar->addWidget(new QLabel(tr("Timeline shows "), bar));
  bar->addWidget(rank_scope_);
  bar->addWidget(rank_);
  connect(rank_scope_, &QComboBox::currentIndexChanged, this, &MainWindow::apply_rank_filter);
  connect(rank_, &QSpinBox::valueChanged, this, &MainWindow::apply_rank_filter);
}

void MainWindow::apply_rank_filter() {
  const auto scope = static_cast<RankScope>(rank_scope_->currentData().toInt());
  rank_->setEnabled(scope != RankScope::all);
  if (!current_ || scope == RankScope::all) {
    timeline_->set_ranks({});
    return;
  }
  timeline_->set_ranks(ranks_in(scope, static_cast<engine::Rank>(rank_->value()), *current_));
}

bool MainWindow::open_file(const QString& path) {
  // A trace (by its extension or its first bytes) fills the timeline, read in the background.
  if (models::is_trace_path(path.toStdString())) {
    runner_.open_trace(path);
    trace_job_ = runner_.latest_job();
    tabs_->setCurrentWidget(timeline_);
    add_recent(path);
    return true;
  }
  // Any other JSON file goes to the view that reads it: a calibration profile, else a result to
  // compare.
  if (QFileInfo(path).suffix().toLower() == QLatin1String("json")) {
    const bool profile = is_calibration_profile(path);
    QString error;
    const bool opened =
        profile ? calibration_->open_profile(path, &error)
                : compare_->open_result(path, compare_->model().a().has_value(), &error);
    if (!opened) {
      status_->setText(error);
      return false;
    }
    tabs_->setCurrentWidget(profile ? static_cast<QWidget*>(calibration_) : compare_);
    add_recent(path);
    status_->setText((profile ? tr("%1 opened in Calibration") : tr("%1 opened in Compare"))
                         .arg(QFileInfo(path).fileName()));
    return true;
  }
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
    status_->setText(tr("cannot open %1: %2").arg(path, file.errorString()));
    return false;
  }
  editor_->set_document(path, QString::fromUtf8(file.readAll()));
  setWindowTitle(QStringLiteral("%1 — clustersim").arg(QFileInfo(path).fileName()));
  add_recent(path);
  runner_.start(editor_->input());
  return true;
}

bool MainWindow::save_file(const QString& path) {
  QString error;
  if (!write_text_file(path, editor_->text(), &error)) {
    QMessageBox::warning(this, tr("Save"), tr("cannot save %1: %2").arg(path, error));
    return false;
  }
  editor_->set_document(path, editor_->text());
  add_recent(path);
  runner_.start(editor_->input());
  return true;
}

void MainWindow::show_presentation(PresentationPtr presentation) {
  transfers_.cancel();
  presentation_ = presentation;
  current_ = presentation ? presentation->prediction : nullptr;
  timeline_->set_presentation(presentation);
  topology_->set_presentation(presentation);
  if (presentation) {
    breakdown_->model().set_table(presentation->breakdown);
    memory_->model().set_table(presentation->memory);
    if (current_) editor_->show_scenario(current_->scenario);
    rank_->setMaximum(std::max(0, static_cast<int>(presentation->schedule().num_ranks) - 1));
  }
  apply_rank_filter();
  summary_->summary().set_prediction(current_);
  compare_->set_current(
      current_, current_ ? QString::fromStdString(current_->output.result.scenario) + tr(" (run)")
                         : QString());
}

QString MainWindow::status_text() const {
  return status_->text();
}

void MainWindow::on_finished(quint64 job, PresentationPtr presentation) {
  if (job == trace_job_) {
    show_presentation(presentation);
    setWindowTitle(
        QStringLiteral("%1 — clustersim").arg(QFileInfo(presentation->trace_path).fileName()));
    status_->setText(tr("%1: a trace of %2 ops on %3 ranks (its scenario has the other views)")
                         .arg(QFileInfo(presentation->trace_path).fileName())
                         .arg(presentation->timeline.item_count())
                         .arg(presentation->schedule().num_ranks));
    return;
  }
  editor_->clear_error();
  show_presentation(std::move(presentation));
  const auto& r = current_->output.result;
  // A Chakra workload has no MFU: the status names only what is known.
  const QString mfu = r.from_traces ? QString() : tr(", MFU %1 %").arg(r.mfu * 100, 0, 'f', 1);
  status_->setText(tr("%1: iteration %2%3 (simulated in %4)")
                       .arg(QString::fromStdString(r.scenario), format_si(r.iteration_time_s, "s"),
                            mfu, format_si(r.wall_s, "s")));
}

QString MainWindow::cable_name(engine::LinkId link) const {
  if (!current_) return {};
  const auto& topology = current_->output.topology;
  return QStringLiteral("%1 ↔ %2").arg(
      QString::fromStdString(topology.vertex(topology.link(link).src).name),
      QString::fromStdString(topology.vertex(topology.link(link).dst).name));
}

void MainWindow::on_cable_selected(int cable) {
  if (cable < 0 || !current_) {
    transfers_.cancel();
    timeline_->highlight_ops({});
    return;
  }
  const auto& links = topology_->layout_data().cables[static_cast<std::size_t>(cable)].links;
  status_->setText(tr("finding the transfers over %1…").arg(cable_name(links.front())));
  transfers_.start(presentation_, links);
}

void MainWindow::on_failed(quint64 job, const QString& message) {
  // A trace's error names its file and what is wrong with it; the editor is not at fault.
  if (job == trace_job_) {
    status_->setText(message);
    return;
  }
  editor_->show_error(message);
  status_->setText(current_ ? tr("error; the last good result stays shown") : tr("error"));
}

QList<QPair<QString, QWidget*>> MainWindow::views() const {
  return {{"timeline", timeline_}, {"breakdown", breakdown_},    {"memory", memory_},
          {"topology", topology_}, {"summary", summary_},        {"compare", compare_},
          {"sweep", sweep_},       {"calibration", calibration_}};
}

bool MainWindow::export_view(const QString& name, const QString& path, QString* error) {
  QWidget* view = nullptr;
  for (const auto& [n, w] : views())
    if (n == name) view = w;
  if (!view) {
    if (error) *error = tr("no view named %1").arg(name);
    return false;
  }
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "png") return export_png(*view, path, error);
  if (suffix == "svg") return export_svg(*view, path, name, error);
  if (suffix != "csv") {
    if (error) *error = tr("%1: use .png, .svg or .csv").arg(path);
    return false;
  }
  QString csv;
  if (view == timeline_) {
    if (presentation_) csv = ops_csv(presentation_->schedule(), presentation_->op_times());
  } else if (view == topology_) {
    csv = topology_->cables_as_csv();
  } else if (view == summary_) {
    csv = to_csv(summary_->summary());
  } else if (view == compare_) {
    csv = to_csv(compare_->model());
  } else if (view == sweep_) {
    csv = to_csv(sweep_->table_model());
  } else if (view == calibration_) {
    const int shown = calibration_->current_curve();
    csv = shown >= 0 ? curve_csv(calibration_->data().curves[static_cast<std::size_t>(shown)])
                     : QString();
  } else {
    csv = to_csv(static_cast<StackedBarsView*>(view)->model(), SegmentTableModel::kValueRole);
  }
  return write_text_file(path, csv, error);
}

bool MainWindow::save_screenshots(const QString& directory, QSize view_size, QString* error) {
  if (!QDir().mkpath(directory)) {
    if (error) *error = tr("cannot create %1").arg(directory);
    return false;
  }
  // The views live in the tab widget's layout, which sets their size: the window (shown, on the
  // offscreen platform when there is no display) is sized so that they get `view_size`, without
  // the editor dock.
  if (auto* dock = findChild<QDockWidget*>()) dock->hide();
  show();
  for (int pass = 0; pass < 3 && tabs_->currentWidget()->size() != view_size; ++pass) {
    resize(view_size + (size() - tabs_->currentWidget()->size()));
    QCoreApplication::processEvents();
  }
  for (const auto& [name, view] : views()) {
    tabs_->setCurrentWidget(view);
    QCoreApplication::processEvents();
    if (view == timeline_) timeline_->fit();
    if (!export_view(name, QDir(directory).filePath(name + ".png"), error)) return false;
  }
  return true;
}

void MainWindow::choose_and_open() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open scenario, trace or result"), {},
      tr("Scenarios (*.yaml *.yml);;Traces (*.json *.pftrace *.perfetto-trace);;Result JSON or "
         "calibration profiles (*.json);;All files (*)"));
  if (!path.isEmpty()) open_file(path);
}

void MainWindow::choose_and_export_view(const QString& filter) {
  const QString name = views()[tabs_->currentIndex()].first;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(name), name, filter);
  QString error;
  if (!path.isEmpty() && !export_view(name, path, &error))
    QMessageBox::warning(this, tr("Export"), error);
}

void MainWindow::choose_and_write_run(bool trace) {
  if (!current_) return;
  const QString path = QFileDialog::getSaveFileName(
      this, trace ? tr("Write trace") : tr("Write result JSON"), {},
      // The extension picks the trace's format (models::write_trace).
      trace ? tr("Perfetto trace, any size (*.pftrace);;Chrome trace JSON (*.json)")
            : tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  try {
    // The front-end API refuses an input of the scenario as an output, and writes atomically.
    models::check_output_path(path.toStdString(), {current_->scenario.file},
                              trace ? "--trace" : "--json");
    if (trace)
      models::write_trace(*current_, path.toStdString());
    else
      models::write_result_json(*current_, path.toStdString(), /*reproducible=*/false);
    status_->setText(tr("wrote %1").arg(path));
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Write"), QStringLiteral("error: ") + e.what());
  }
}

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecentFiles)
    recent.removeLast();
  settings.setValue(kRecentKey, recent);
  refresh_recent_menu();
}

void MainWindow::refresh_recent_menu() {
  recent_menu_->clear();
  for (const QString& path : QSettings().value(kRecentKey).toStringList())
    recent_menu_->addAction(path, this, [this, path] { open_file(path); });
  recent_menu_->setEnabled(!recent_menu_->isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.first().isLocalFile()) open_file(urls.first().toLocalFile());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window_state"), saveState());
  QMainWindow::closeEvent(event);
}

}  // namespace clustersim::gui
