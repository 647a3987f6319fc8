#include "gui/models/time_axis.hpp"

#include <algorithm>

namespace clustersim::gui {

TimeAxis::TimeAxis(double origin_s, double seconds_per_pixel)
    : origin_s_(origin_s), seconds_per_pixel_(std::max(seconds_per_pixel, kMinSecondsPerPixel)) {}

void TimeAxis::zoom_at(double anchor_pixel, double factor) {
  if (!(factor > 0)) return;
  const double anchor_s = to_time(anchor_pixel);
  seconds_per_pixel_ = std::max(seconds_per_pixel_ / factor, kMinSecondsPerPixel);
  origin_s_ = anchor_s - anchor_pixel * seconds_per_pixel_;
}

void TimeAxis::pan_pixels(double dx) {
  origin_s_ -= dx * seconds_per_pixel_;
}

void TimeAxis::fit(double start_s, double end_s, double width_pixels) {
  if (!(width_pixels > 0)) return;
  const double span = end_s > start_s ? end_s - start_s : kMinSecondsPerPixel * width_pixels;
  origin_s_ = start_s;
  seconds_per_pixel_ = std::max(span / width_pixels, kMinSecondsPerPixel);
}

}  // namespace clustersim::gui
