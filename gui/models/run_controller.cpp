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
  if (cancelled) *cancelled = false;
  try {
    return std::make_shared<const models::Prediction>(models::predict(request));
  } catch (const models::Cancelled&) {
    if (cancelled) *cancelled = true;
    if (error) *error = QStringLiteral("cancelled");
  } catch (const std::exception& e) {
    // The CLI prints every error this way (cli/main.cpp).
    if (error) *error = QStringLiteral("error: ") + QString::fromStdString(e.what());
  }
  return nullptr;
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

void RunController::wait_idle() {
  while (running_ > 0) {
    QThreadPool::globalInstance()->waitForDone(20);
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
}

void RunController::start_pending() {
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
  const RunInput input = pending_;
  const auto flag = cancel_flag_;
  watcher->setFuture(QtConcurrent::run([input, flag, report] {
    Outcome outcome;
    if (auto prediction =
            run_prediction(input, flag.get(), report, &outcome.error, &outcome.cancelled)) {
      if (flag->load()) {  // stale already: skip building what nobody will show
        outcome.cancelled = true;
      } else {
        outcome.presentation = present(std::move(prediction));
      }
    }
    return outcome;
  }));
}

}  // namespace clustersim::gui
