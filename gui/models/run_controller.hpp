// Runs predictions in the background (QtConcurrent) for the editor, and builds what the views
// draw of them there too (present()); reads traces the same way: requests are debounced, each
// run gets a job id and its own cancel flag (the front-end API's), a newer request cancels the
// older run and a stale run's result is dropped, so only the latest request ever reports.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>

#include "models/frontend.hpp"

namespace clustersim::gui {

using PredictionPtr = std::shared_ptr<const models::Prediction>;
struct Presentation;
// A run's prediction with what the views draw of it (gui/models/presentation.hpp).
using PresentationPtr = std::shared_ptr<const Presentation>;

// What to run: the scenario file (it names the text in messages and anchors relative paths), its
// text as edited (empty: read the file) and --set style overrides.
struct RunInput {
  QString path;
  QString text;
  QStringList overrides;
};

// Runs one prediction in the calling thread. On failure returns null with `error` set to the
// CLI's message for it ("error: ..."); `cancelled` tells a cancelled run apart.
PredictionPtr run_prediction(const RunInput& input, const std::atomic<bool>* cancel,
                             const models::ProgressFn& progress, QString* error, bool* cancelled);
// Reads a trace the CLI wrote (models::read_trace) and builds its presentation, the same way.
PresentationPtr read_trace_presentation(const QString& path, const std::atomic<bool>* cancel,
                                        const models::ProgressFn& progress, QString* error,
                                        bool* cancelled);

// Blocks, running the event loop, until `running` (a controller's count of jobs in flight, which
// their watchers decrement on this thread) is 0: tests and shutdown.
void wait_for_jobs(const int& running);

class RunController : public QObject {
  Q_OBJECT

 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // How long requests wait for the next edit before a run starts.
  void set_debounce_ms(int milliseconds) { debounce_.setInterval(milliseconds); }
  // Debounced: the run starts when no request came for the debounce interval.
  void request(const RunInput& input);
  // Starts now, cancelling the run in flight.
  void start(const RunInput& input);
  // Reads a trace (clustersim run --trace t.json) instead of running: reported like a run, and
  // a run requested later replaces it as any newer run does.
  void open_trace(const QString& path);
  // Cancels the pending request and the run in flight.
  void cancel();
  bool busy() const { return running_ > 0; }
  quint64 latest_job() const { return latest_job_; }
  // Blocks until no run is in flight (tests, shutdown).
  void wait_idle();

 signals:
  void started(quint64 job);
  void progress(quint64 job, const QString& phase, double fraction);
  void finished(quint64 job, clustersim::gui::PresentationPtr presentation);
  void failed(quint64 job, const QString& message);
  void cancelled(quint64 job);
  void idle();

 private:
  void start_pending();
  // What a background job does: returns the presentation, or null with the error or cancelled.
  using Job = std::function<PresentationPtr(const std::atomic<bool>* cancel,
                                            const models::ProgressFn& progress, QString* error,
                                            bool* cancelled)>;
  void launch(Job work);

  QTimer debounce_;
  RunInput pending_;
  quint64 latest_job_ = 0;
  int running_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

}  // namespace clustersim::gui
