// A table model as CSV (RFC 4180 quoting), for every view's "export data".
#pragma once

#include <QAbstractItemModel>
#include <QString>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"

namespace clustersim::gui {

// Header row from the horizontal headers, then one line per row led by its vertical header.
QString to_csv(const QAbstractItemModel& model, int value_role = Qt::DisplayRole);
// The timeline's data: one line per op (rank, stream, label, kind, category, start, end, bytes,
// FLOPs), times in seconds.
QString ops_csv(const engine::Schedule& schedule, const engine::Timeline& timeline);
// Written atomically (QSaveFile); false with `error` set when it cannot be.
bool write_text_file(const QString& path, const QString& text, QString* error);

}  // namespace clustersim::gui
