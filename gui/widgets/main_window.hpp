// The dashboard: the scenario editor docked beside the views (timeline, breakdown, memory,
// summary), background runs with progress and cancel in the status bar, open/save/recent files,
// drag and drop, and export of every view (PNG, SVG, CSV) and of the run (result JSON, trace).
#pragma once

#include <QMainWindow>
#include <QPointer>

#include "gui/models/link_transfers.hpp"
#include "gui/models/run_controller.hpp"

class QComboBox;
class QLabel;
class QSpinBox;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace clustersim::gui {

class CalibrationView;
class CompareView;
class ScenarioEditor;
class SweepView;
class StackedBarsView;
class SummaryView;
class TimelineView;
class TopologyView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Reads a scenario and runs it at once, a trace the CLI wrote (--trace t.json) into the
  // timeline (in the background, like a run), a calibration profile (.json) into the calibration
  // view, or a result JSON (.json) into the compare view (as A when A is empty, else as B); false
  // (with the reason shown) when it cannot be read.
  bool open_file(const QString& path);
  bool save_file(const QString& path);
  // Shows a run's result in every view (what a finished background run does).
  void show_presentation(PresentationPtr presentation);
  // The last good result, kept while a run is in flight or after one failed; null while a trace
  // is shown.
  PredictionPtr current() const { return current_; }
  PresentationPtr presentation() const { return presentation_; }

  RunController& runner() { return runner_; }
  LinkTransferSearch& transfer_search() { return transfers_; }
  ScenarioEditor* editor() const { return editor_; }
  TimelineView* timeline_view() const { return timeline_; }
  StackedBarsView* breakdown_view() const { return breakdown_; }
  StackedBarsView* memory_view() const { return memory_; }
  SummaryView* summary_view() const { return summary_; }
  TopologyView* topology_view() const { return topology_; }
  CompareView* compare_view() const { return compare_; }
  SweepView* sweep_view() const { return sweep_; }
  CalibrationView* calibration_view() const { return calibration_; }
  QString status_text() const;

  // The views by name ("timeline", "breakdown", "memory", "topology", "summary", "compare",
  // "sweep", "calibration"), in tab order.
  QList<QPair<QString, QWidget*>> views() const;
  // Exports view `name` by the path's suffix: .png, .svg or .csv (its data).
  bool export_view(const QString& name, const QString& path, QString* error);
  // Every view as DIR/<name>.png at `view_size` (clustersim-gui --screenshot).
  bool save_screenshots(const QString& directory, QSize view_size, QString* error);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void build_rank_filter();
  void apply_rank_filter();
  void add_recent(const QString& path);
  void refresh_recent_menu();
  void choose_and_open();
  void choose_and_export_view(const QString& filter);
  void choose_and_write_run(bool trace);
  void on_finished(quint64 job, PresentationPtr presentation);
  void on_failed(quint64 job, const QString& message);
  void on_cable_selected(int cable);
  // "n0.nic0 ↔ leaf0": the ends of `link`'s cable.
  QString cable_name(engine::LinkId link) const;

  RunController runner_;
  LinkTransferSearch transfers_;
  PredictionPtr current_;
  PresentationPtr presentation_;
  quint64 trace_job_ = 0;  // the job reading a trace, whose errors go to the status bar
  ScenarioEditor* editor_;
  QTabWidget* tabs_;
  TimelineView* timeline_;
  StackedBarsView* breakdown_;
  StackedBarsView* memory_;
  SummaryView* summary_;
  TopologyView* topology_;
  CompareView* compare_;
  SweepView* sweep_;
  CalibrationView* calibration_;
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QMenu* recent_menu_ = nullptr;
  QComboBox* rank_scope_ = nullptr;
  QSpinBox* rank_ = nullptr;
};

}  // namespace clustersim::gui
