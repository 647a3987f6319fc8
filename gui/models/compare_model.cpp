#include "gui/models/compare_model.hpp"

#include <QFile>
#include <QFileInfo>
#include <array>
#include <cmath>

#include "gui/models/segment_table.hpp"
#include "models/result_json.hpp"

namespace clustersim::gui {

namespace {

// How a figure is written and compared.
enum class Kind {
  seconds,   // "1.25 ms"; B − A in seconds
  rate,      // per second, whole numbers
  tflops,    // one decimal
  fraction,  // "41.2 %"; B − A in percentage points
  bytes,     // "34.0 GB"
  count,     // an integer
  text,      // compared for equality only
};

struct Figure {
  const char* label;
  const char* pointer;  // JSON pointer into the result JSON
  Kind kind;
};

// The summary's figures, in its order (docs/outputs.md names each key).
constexpr std::array kFigures{
    Figure{"iteration time", "/iteration_time_s", Kind::seconds},
    Figure{"tokens/s", "/tokens_per_s", Kind::rate},
    Figure{"samples/s", "/samples_per_s", Kind::rate},
    Figure{"TFLOP/s per GPU", "/tflops_per_gpu", Kind::tflops},
    Figure{"MFU", "/mfu", Kind::fraction},
    Figure{"pipeline bubble", "/bubble_fraction", Kind::fraction},
    Figure{"compute (critical rank)", "/breakdown_s/compute", Kind::seconds},
    Figure{"recompute", "/breakdown_s/recompute", Kind::seconds},
    Figure{"idle", "/breakdown_s/idle", Kind::seconds},
    Figure{"exposed communication", "/exposed_comm_s/total", Kind::seconds},
    Figure{"exposed dp", "/exposed_comm_s/dp", Kind::seconds},
    Figure{"exposed tp", "/exposed_comm_s/tp", Kind::seconds},
    Figure{"exposed pp", "/exposed_comm_s/pp", Kind::seconds},
    Figure{"exposed ep", "/exposed_comm_s/ep", Kind::seconds},
    Figure{"communication hidden", "/comm_overlap_fraction", Kind::fraction},
    Figure{"memory per GPU", "/memory/peak_bytes_per_gpu", Kind::bytes},
    Figure{"memory verdict", "/memory/verdict", Kind::text},
    Figure{"GPUs", "/world_size", Kind::count},
    Figure{"network model", "/network_model", Kind::text},
};

// Keys every result JSON has (a Chakra workload's figures it cannot give are null, not absent).
constexpr std::array kRequired{
    "/iteration_time_s", "/tokens_per_s",         "/tflops_per_gpu",      "/mfu",
    "/bubble_fraction",  "/exposed_comm_s/total", "/breakdown_s/compute", "/world_size",
    "/network_model"};

const nlohmann::json* find(const nlohmann::json& j, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  return j.contains(p) ? &j.at(p) : nullptr;
}

QString format(const nlohmann::json& v, Kind kind) {
  if (v.is_null()) return QStringLiteral("unknown");
  if (kind == Kind::text)
    return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump());
  if (!v.is_number()) return QStringLiteral("?");
  const double x = v.get<double>();
  switch (kind) {
    case Kind::seconds:
      return format_si(x, QStringLiteral("s"));
    case Kind::rate:
      return QString::number(x, 'f', 0);
    case Kind::tflops:
      return QString::number(x, 'f', 1);
    case Kind::fraction:
      return QString::number(x * 100, 'f', 1) + QStringLiteral(" %");
    case Kind::bytes:
      return format_si(x, QStringLiteral("B"));
    case Kind::count:
      return QString::number(x, 'f', 0);
    case Kind::text:
      break;
  }
  return {};
}

QString signed_number(double x, int decimals) {
  return (x > 0 ? QStringLiteral("+") : QString()) + QString::number(x, 'f', decimals);
}

// B − A in the figure's unit: seconds and bytes with an SI prefix, fractions in percentage
// points, text as "same" or "differs".
QString difference(const nlohmann::json& a, const nlohmann::json& b, Kind kind) {
  if (kind == Kind::text) return a == b ? QStringLiteral("same") : QStringLiteral("differs");
  if (!a.is_number() || !b.is_number()) return {};
  const double d = b.get<double>() - a.get<double>();
  switch (kind) {
    case Kind::seconds:
      return (d > 0 ? QStringLiteral("+") : QString()) + format_si(d, QStringLiteral("s"));
    case Kind::bytes:
      return (d > 0 ? QStringLiteral("+") : QString()) + format_si(d, QStringLiteral("B"));
    case Kind::fraction:
      return signed_number(d * 100, 1) + QStringLiteral(" pp");
    case Kind::tflops:
      return signed_number(d, 1);
    case Kind::rate:
    case Kind::count:
      return signed_number(d, 0);
    case Kind::text:
      break;
  }
  return {};
}

// (B − A) / A in per cent, where A is a non-zero number.
QString change(const nlohmann::json& a, const nlohmann::json& b, Kind kind) {
  if (kind == Kind::text || !a.is_number() || !b.is_number() || a.get<double>() == 0) return {};
  return signed_number((b.get<double>() / a.get<double>() - 1) * 100, 1) + QStringLiteral(" %");
}

}  // namespace

ComparedResult read_result_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw ResultFileError(path.toStdString() +
                          ": cannot read: " + file.errorString().toStdString());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(file.readAll().toStdString());
  } catch (const nlohmann::json::exception& e) {
    throw ResultFileError(path.toStdString() + ": not JSON: " + e.what());
  }
  if (!j.is_object())
    throw ResultFileError(path.toStdString() +
                          ": not a result JSON (expected the map clustersim run --json writes)");
  for (const char* key : kRequired) {
    const nlohmann::json* v = find(j, key);
    const std::string name = std::string(key + 1);
    if (v == nullptr)
      throw ResultFileError(path.toStdString() + ": key " + name +
                            " is missing; allowed: a result JSON of clustersim run --json");
    if (!v->is_number() && !v->is_null() && !v->is_string())
      throw ResultFileError(path.toStdString() + ": key " + name + " is " + v->type_name() +
                            "; allowed: a number");
  }
  return {QFileInfo(path).fileName(), std::move(j)};
}

ComparedResult result_of(const models::Prediction& prediction, const QString& origin) {
  return {origin, nlohmann::json::parse(models::result_to_json(prediction.output.result).dump())};
}

void CompareModel::set_a(std::optional<ComparedResult> a) {
  beginResetModel();
  a_ = std::move(a);
  endResetModel();
}

void CompareModel::set_b(std::optional<ComparedResult> b) {
  beginResetModel();
  b_ = std::move(b);
  endResetModel();
}

QString CompareModel::cell(int row, Column column) const {
  const Figure& f = kFigures[static_cast<std::size_t>(row)];
  const nlohmann::json* a = a_ ? find(a_->json, f.pointer) : nullptr;
  const nlohmann::json* b = b_ ? find(b_->json, f.pointer) : nullptr;
  switch (column) {
    case kA:
      return a ? format(*a, f.kind) : QString();
    case kB:
      return b ? format(*b, f.kind) : QString();
    case kDifference:
      return a && b ? difference(*a, *b, f.kind) : QString();
    case kChange:
      return a && b ? change(*a, *b, f.kind) : QString();
    case kColumns:
      break;
  }
  return {};
}

QString CompareModel::text(const QString& figure, Column column) const {
  for (std::size_t i = 0; i < kFigures.size(); ++i)
    if (figure == QLatin1String(kFigures[i].label)) return cell(static_cast<int>(i), column);
  return {};
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(kFigures.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole || index.row() >= rowCount() ||
      index.column() >= kColumns)
    return {};
  return cell(index.row(), static_cast<Column>(index.column()));
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical)
    return section < rowCount()
               ? QVariant(QString::fromLatin1(kFigures[static_cast<std::size_t>(section)].label))
               : QVariant();
  switch (section) {
    case kA:
      return QStringLiteral("A: ") + (a_ ? a_->origin : QStringLiteral("—"));
    case kB:
      return QStringLiteral("B: ") + (b_ ? b_->origin : QStringLiteral("—"));
    case kDifference:
      return QStringLiteral("B − A");
    case kChange:
      return QStringLiteral("change");
    default:
      return {};
  }
}

}  // namespace clustersim::gui
