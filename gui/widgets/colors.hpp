// Colours of the views: categories and segments from the Okabe–Ito set, which stays distinct
// under the common colour-vision deficiencies; everything else from the widget's palette, so the
// views follow dark mode.
#pragma once

#include <QColor>

#include "engine/schedule.hpp"

namespace clustersim::gui {

QColor category_color(engine::Category category);
// The n-th segment of a stacked bar (cycles through the set).
QColor segment_color(int segment);

}  // namespace clustersim::gui
