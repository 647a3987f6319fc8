// Every view as a picture: PNG (QImage) or SVG (QSvgGenerator), rendered through the widget's own
// paint code at its current size, so exports match the screen and need no display.
#pragma once

#include <QString>
#include <QWidget>

namespace clustersim::gui {

bool export_png(QWidget& view, const QString& path, QString* error);
bool export_svg(QWidget& view, const QString& path, const QString& title, QString* error);

}  // namespace clustersim::gui
