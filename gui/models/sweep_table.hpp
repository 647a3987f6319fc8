// A parameter sweep in the GUI (issue 12 "Sweep"): the rows of models::run_sweep as a table and
// as curves to plot, and a controller that runs one sweep at a time in the background.
#pragma once

#include <QAbstractTableModel>
#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gui/models/run_controller.hpp"
#include "models/sweep.hpp"

namespace clustersim::gui {

using SweepResultPtr = std::shared_ptr<const models::SweepResult>;

// The figures a sweep plots and tabulates: the result JSON's flattened key and a label.
struct SweepFigure {
  const char* key;
  const char* label;
};
const std::vector<SweepFigure>& sweep_figures();

// One curve: `figure` against the first axis, for one value of the second axis (or the only
// curve of a one-axis sweep). x is the first axis's value where every value is a number, else
// its position among the values; points that did not run (invalid, failed) are left out.
struct SweepSeries {
  QString name;                   // "" or "parallel.tp=4"
  QVector<QPointF> points;        // by x
  std::vector<std::size_t> rows;  // the row of each point, for clicks
};
std::vector<SweepSeries> sweep_series(const models::SweepResult& result, const std::string& figure);

// One row per point: the axis values, the status, then each sweep_figures() value (or the
// reason a point did not run).
class SweepTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  using QAbstractTableModel::QAbstractTableModel;
  void set_result(SweepResultPtr result);
  const SweepResultPtr& result() const { return result_; }
  // The --set overrides of row `row` ("parallel.tp=4"), to open that plan.
  QStringList overrides(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  SweepResultPtr result_;
};

// Runs one sweep at a time off the UI thread (models::run_sweep on its thread pool), cancellable;
// starting another cancels the one in flight, whose result is then dropped.
class SweepController : public QObject {
  Q_OBJECT

 public:
  explicit SweepController(QObject* parent = nullptr);
  ~SweepController() override;

  // `varies`: one or two "KEY=V1,V2,..." (ranges as `clustersim sweep --vary`). False, with
  // `error` set to the message, when an axis cannot be read; nothing starts then.
  bool start(const RunInput& input, const QStringList& varies, QString* error);
  void cancel();
  bool busy() const { return running_ > 0; }
  void wait_idle();

 signals:
  void progress(int done, int total);
  void finished(clustersim::gui::SweepResultPtr result);
  void failed(const QString& message);
  void cancelled();

 private:
  quint64 latest_ = 0;
  int running_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

}  // namespace clustersim::gui
