#include "gui/models/csv.hpp"

#include <QSaveFile>

namespace clustersim::gui {

namespace {

QString quoted(QString field) {
  if (!field.contains(',') && !field.contains('"') && !field.contains('\n')) return field;
  field.replace(QStringLiteral("\""), QStringLiteral("\"\""));
  return '"' + field + '"';
}

}  // namespace

QString to_csv(const QAbstractItemModel& model, int value_role) {
  QString out;
  QStringList line{QString()};
  for (int c = 0; c < model.columnCount(); ++c)
    line << quoted(model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
  out += line.join(',') + '\n';
  for (int r = 0; r < model.rowCount(); ++r) {
    line = {quoted(model.headerData(r, Qt::Vertical, Qt::DisplayRole).toString())};
    for (int c = 0; c < model.columnCount(); ++c) {
      const QVariant value = model.data(model.index(r, c), value_role);
      // Numbers as written by hand ("0.0005", not QVariant's "5e-04"), 12 significant digits.
      line << (value.typeId() == QMetaType::Double ? QString::number(value.toDouble(), 'g', 12)
                                                   : quoted(value.toString()));
    }
    out += line.join(',') + '\n';
  }
  return out;
}

QString ops_csv(const engine::Schedule& schedule, const engine::Timeline& timeline) {
  QString out = QStringLiteral("op,rank,stream,label,kind,category,start_s,end_s,bytes,flops\n");
  auto text = [](std::string_view v) {
    return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
  };
  const engine::OpStore::Reader in_order = schedule.ops.reader();
  for (engine::OpId id = 0; id < schedule.ops.size(); ++id) {
    const engine::Op op = in_order[id];
    out += QStringList{QString::number(id),
                       QString::number(op.rank),
                       quoted(QString::fromStdString(schedule.stream_names[op.stream])),
                       quoted(QString::fromStdString(schedule.label(op))),
                       text(engine::to_string(op.kind)),
                       text(engine::to_string(op.category)),
                       QString::number(timeline.start[id].seconds(), 'g', 12),
                       QString::number(timeline.end[id].seconds(), 'g', 12),
                       QString::number(op.bytes),
                       QString::number(schedule.flops(op), 'g', 12)}
               .join(',') +
           '\n';
  }
  return out;
}

bool write_text_file(const QString& path, const QString& text, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(text.toUtf8()) < 0 ||
      !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

}  // namespace clustersim::gui
