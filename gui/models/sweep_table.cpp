#include "gui/models/sweep_table.hpp"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "gui/models/segment_table.hpp"

namespace clustersim::gui {

namespace {

// A value as a number when all of it is one ("25", "1e3"), else nothing.
std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

QString figure_text(const nlohmann::ordered_json& row, const char* key) {
  if (!row.contains(key)) return {};
  const auto& v = row[key];
  if (v.is_null()) return QStringLiteral("unknown");
  if (v.is_boolean()) return v.get<bool>() ? QStringLiteral("yes") : QStringLiteral("no");
  if (!v.is_number())
    return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump());
  const double x = v.get<double>();
  const std::string k = key;
  if (k.ends_with("_s")) return format_si(x, QStringLiteral("s"));
  if (k.ends_with("bytes_per_gpu") || k.ends_with("headroom_bytes"))
    return format_si(x, QStringLiteral("B"));
  if (k == "mfu") return QString::number(x * 100, 'f', 1) + QStringLiteral(" %");
  return QString::number(x, 'g', 6);
}

}  // namespace

const std::vector<SweepFigure>& sweep_figures() {
  static const std::vector<SweepFigure> figures = {
      {"iteration_time_s", "iteration time"},          {"tokens_per_s", "tokens/s"}, {"mfu", "MFU"},
      {"memory.peak_bytes_per_gpu", "memory per GPU"}, {"memory.fits", "fits"},
  };
  return figures;
}

std::vector<SweepSeries> sweep_series(const models::SweepResult& result,
                                      const std::string& figure) {
  std::vector<SweepSeries> out;
  if (result.axes.empty()) return out;
  const auto& first = result.axes[0].values;
  // Numbers when every value of the first axis is one; else positions.
  bool numeric = true;
  for (const std::string& v : first)
    numeric = numeric && number(v).has_value();
  std::map<std::string, std::size_t> by_second;  // series per value of the second axis
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    const models::SweepRow& row = result.rows[r];
    if (row.status != models::SweepStatus::ok || !row.result.contains(figure) ||
        !row.result[figure].is_number())
      continue;
    const std::string second = result.axes.size() > 1 ? row.values[1] : std::string();
    auto [it, fresh] = by_second.try_emplace(second, out.size());
    if (fresh)
      out.push_back(
          {second.empty() ? QString() : QString::fromStdString(result.axes[1].key + "=" + second),
           {},
           {}});
    const auto pos = std::find(first.begin(), first.end(), row.values[0]) - first.begin();
    const double x = numeric ? *number(row.values[0]) : static_cast<double>(pos);
    SweepSeries& s = out[it->second];
    s.points.push_back({x, row.result[figure].get<double>()});
    s.rows.push_back(r);
  }
  for (SweepSeries& s : out) {  // by x, rows alongside
    std::vector<std::size_t> order(s.points.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return s.points[static_cast<qsizetype>(a)].x() < s.points[static_cast<qsizetype>(b)].x();
    });
    SweepSeries sorted{s.name, {}, {}};
    for (std::size_t i : order) {
      sorted.points.push_back(s.points[static_cast<qsizetype>(i)]);
      sorted.rows.push_back(s.rows[i]);
    }
    s = std::move(sorted);
  }
  return out;
}

void SweepTableModel::set_result(SweepResultPtr result) {
  beginResetModel();
  result_ = std::move(result);
  endResetModel();
}

QStringList SweepTableModel::overrides(int row) const {
  if (!result_ || row < 0 || row >= rowCount()) return {};
  const models::SweepRow& r = result_->rows[static_cast<std::size_t>(row)];
  QStringList out;
  for (std::size_t a = 0; a < result_->axes.size(); ++a)
    out << QString::fromStdString(result_->axes[a].key + "=" + r.values[a]);
  return out;
}

int SweepTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(result_->rows.size());
}

int SweepTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  const int axes = result_ ? static_cast<int>(result_->axes.size()) : 1;
  return axes + 1 + static_cast<int>(sweep_figures().size());
}

QVariant SweepTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole || !result_ || index.row() >= rowCount() ||
      index.column() >= columnCount())
    return {};
  const models::SweepRow& r = result_->rows[static_cast<std::size_t>(index.row())];
  const int axes = static_cast<int>(result_->axes.size());
  const int c = index.column();
  if (c < axes) return QString::fromStdString(r.values[static_cast<std::size_t>(c)]);
  if (c == axes) return QString::fromUtf8(models::to_string(r.status).data());
  if (r.status != models::SweepStatus::ok)
    return c == axes + 1 ? QString::fromStdString(r.reason) : QVariant();
  return figure_text(r.result, sweep_figures()[static_cast<std::size_t>(c - axes - 1)].key);
}

QVariant SweepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return QString::number(section);
  const int axes = result_ ? static_cast<int>(result_->axes.size()) : 1;
  if (section < axes)
    return result_ ? QString::fromStdString(result_->axes[static_cast<std::size_t>(section)].key)
                   : QStringLiteral("point");
  if (section == axes) return QStringLiteral("status");
  const auto i = static_cast<std::size_t>(section - axes - 1);
  return i < sweep_figures().size() ? QVariant(QString::fromLatin1(sweep_figures()[i].label))
                                    : QVariant();
}

SweepController::SweepController(QObject* parent) : QObject(parent) {}

SweepController::~SweepController() {
  if (cancel_flag_) cancel_flag_->store(true);
  wait_idle();
}

bool SweepController::start(const RunInput& input, const QStringList& varies, QString* error) {
  models::SweepRequest request;
  request.base.scenario = input.path.toStdString();
  if (!input.text.isEmpty()) request.base.text = input.text.toStdString();
  for (const QString& o : input.overrides)
    request.base.overrides.push_back(o.toStdString());
  try {
    for (const QString& v : varies)
      if (!v.trimmed().isEmpty())
        request.axes.push_back(models::parse_sweep_axis(v.trimmed().toStdString()));
  } catch (const std::exception& e) {
    if (error) *error = QStringLiteral("error: ") + QString::fromStdString(e.what());
    return false;
  }
  if (request.axes.empty()) {
    if (error) *error = tr("give a key to vary, e.g. parallel.bucket_mb=1..256x2");
    return false;
  }
  if (cancel_flag_) cancel_flag_->store(true);  // the sweep in flight is stale now
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  request.cancel = cancel_flag_.get();
  const quint64 job = ++latest_;
  ++running_;
  QPointer<SweepController> self(this);
  request.progress = [self, job](std::size_t done, std::size_t total) {
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, job, done, total] {
          if (self && job == self->latest_)
            emit self->progress(static_cast<int>(done), static_cast<int>(total));
        },
        Qt::QueuedConnection);
  };
  struct Outcome {
    SweepResultPtr result;
    QString error;
  };
  auto watcher = new QFutureWatcher<Outcome>(this);
  const auto flag = cancel_flag_;
  connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, job, flag] {
    const Outcome outcome = watcher->result();
    watcher->deleteLater();
    --running_;
    if (job != latest_) return;  // a stale sweep's rows are dropped
    if (flag->load())
      emit cancelled();
    else if (outcome.result)
      emit finished(outcome.result);
    else
      emit failed(outcome.error);
  });
  watcher->setFuture(QtConcurrent::run([request, flag] {
    Outcome outcome;
    try {
      outcome.result = std::make_shared<const models::SweepResult>(models::run_sweep(request));
    } catch (const std::exception& e) {
      outcome.error = QStringLiteral("error: ") + QString::fromStdString(e.what());
    }
    return outcome;
  }));
  return true;
}

void SweepController::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
}

void SweepController::wait_idle() {
  wait_for_jobs(running_);
}

}  // namespace clustersim::gui
