#include "gui/widgets/export.hpp"

#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

namespace clustersim::gui {

bool export_png(QWidget& view, const QString& path, QString* error) {
  QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
  image.fill(view.palette().base().color());
  view.render(&image);
  if (image.save(path, "PNG")) return true;
  if (error) *error = QStringLiteral("cannot write %1").arg(path);
  return false;
}

bool export_svg(QWidget& view, const QString& path, const QString& title, QString* error) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(view.size());
  svg.setViewBox(QRect(QPoint(0, 0), view.size()));
  svg.setTitle(title);
  svg.setDescription(QStringLiteral("clustersim-gui"));
  QPainter painter;
  if (!painter.begin(&svg)) {
    if (error) *error = QStringLiteral("cannot write %1").arg(path);
    return false;
  }
  view.render(&painter);
  return painter.end();
}

}  // namespace clustersim::gui
