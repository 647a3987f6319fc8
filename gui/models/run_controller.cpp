#include "gui/models/run_controller.hpp"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QPointer>
#include <QThreadPool>
#include <QtConcurrent>

#include "gui/models/presentation.hpp"

namespace clustersim::gui {

namespace {

// What a background run hands back to the GUI thread.
struct Outcome {
  PresentationPtr presentation;
  QString error;
  bool cancelled = false;
};

// `work()`'s result, or null with the CLI's message for what it threw.
template <typename Work>
auto guarded(const Work& work, QString* error, bool* cancelled) -> decltype(work()) {
  if (cancelled) *cancelled = false;
  try {
    return work();
  } catch (const models::Cancelled&) {
    if (cancelled) *cancelled = true;
    if (error) *error = QStringLiteral("cancelled");
  } catch (const std::exception& e) {
    // The CLI prints every error this way (cli/main.cpp).
    if (error) *error = QStringLiteral("error: ") + QString::fromStdString(e.what());
  }
  return nullptr;
}

}  // namespace

PredictionPtr run_prediction(const RunInput& input, const std::atomic<bool>* cancel,
                             const models::ProgressFn& progress, QString* error, bool* cancelled) {
  models::RunRequest request;
  request.scenario = input.path.toStdString();
  if (!input.text.isEmpty()) request.text = input.text.toStdString();
  for (const QString& o : input.overrides)
    request.overrides.push_back(o.toStdString());
  request.progress = progress;
  request.cancel = cancel;
  return guarded(
      [&] { return std::make_shared<const models::Prediction>(models::predict(request)); }, error,
      cancelled);
}

PresentationPtr read_trace_presentation(const QString& path, const std::atomic<bool>* cancel,
                                        const models::ProgressFn& progress, QString* error,
                                        bool* cancelled) {
  return guarded(
      [&] { return present_trace(models::read_trace(path.toStdString(), progress, cancel), path); },
      error, cancelled);
}

RunController::RunController(QObject* parent) : QObject(parent) {
  debounce_.setSingleShot(true);
  debounce_.setInterval(400);
  connect(&debounce_, &QTimer::timeout, this, &RunController::start_pending);
}

RunController::~RunController() {
  if (cancel_flag_) cancel_flag_->store(true);
  wait_idle();
}

void RunController::request(const RunInput& input) {
  pending_ = input;
  debounce_.start();
}

void RunController::start(const RunInput& input) {
  pending_ = input;
  debounce_.stop();
  start_pending();
}

void RunController::cancel() {
  debounce_.stop();
  if (cancel_flag_) cancel_flag_->store(true);
}

void wait_for_jobs(const int& running) {
  while (running > 0) {
    QThreadPool::globalInstance()->waitForDone(20);
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
}

void RunController::wait_idle() {
  wait_for_jobs(running_);
}

void RunController::open_trace(const QString& path) {
  debounce_.stop();
  launch([path](const std::atomic<bool>* cancel, const models::ProgressFn& progress, QString* error,
                bool* cancelled) {
    return read_trace_presentation(path, cancel, progress, error, cancelled);
  });
}

void RunController::start_pending() {
  const RunInput input = pending_;
  launch([input](const std::atomic<bool>* cancel, const models::ProgressFn& progress,
                 QString* error, bool* cancelled) -> PresentationPtr {
    auto prediction = run_prediction(input, cancel, progress, error, cancelled);
    if (!prediction) return nullptr;
    if (cancel->load()) {  // stale already: skip building what nobody will show
      *cancelled = true;
      return nullptr;
    }
    return present(std::move(prediction));
  });
}

void RunController::launch(Job work) {
  if (cancel_flag_) cancel_flag_->store(true);  // the run in flight is stale now
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  const quint64 job = ++latest_job_;
  ++running_;
  emit started(job);

  QPointer<RunController> self(this);
  // Progress arrives on the worker thread; it is forwarded only when it moved by a percent.
  auto last_reported = std::make_shared<double>(-1.0);
  models::ProgressFn report = [self, job, last_reported](std::string_view phase, double fraction) {
    if (fraction - *last_reported < 0.01 && fraction != 0.0) return;
    *last_reported = fraction;
    const QString name = QString::fromUtf8(phase.data(), static_cast<qsizetype>(phase.size()));
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, job, name, fraction] {
          if (self && job == self->latest_job_) emit self->progress(job, name, fraction);
        },
        Qt::QueuedConnection);
  };
  auto watcher = new QFutureWatcher<Outcome>(this);
  connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, job] {
    const Outcome outcome = watcher->result();
    watcher->deleteLater();
    --running_;
    if (job == latest_job_) {  // a stale run's outcome is dropped
      if (outcome.presentation)
        emit finished(job, outcome.presentation);
      else if (outcome.cancelled)
        emit cancelled(job);
      else
        emit failed(job, outcome.error);
    }
    if (running_ == 0) emit idle();
  });
  const auto flag = cancel_flag_;
  watcher->setFuture(QtConcurrent::run([work = std::move(work), flag, report] {
    Outcome outcome;
    outcome.presentation = work(flag.get(), report, &outcome.error, &outcome.cancelled);
    return outcome;
  }));
}

}  // namespace clustersim::gui
