// The timeline's mapping between simulated time and horizontal pixels: an origin (the time at
// pixel 0) and a scale. Zooming keeps the time under the cursor at the cursor.
#pragma once

namespace clustersim::gui {

class TimeAxis {
 public:
  // The finest zoom: one picosecond (the engine's tick) per pixel.
  static constexpr double kMinSecondsPerPixel = 1e-12;

  TimeAxis() = default;
  TimeAxis(double origin_s, double seconds_per_pixel);

  double origin_s() const { return origin_s_; }
  double seconds_per_pixel() const { return seconds_per_pixel_; }

  double to_pixel(double time_s) const { return (time_s - origin_s_) / seconds_per_pixel_; }
  double to_time(double pixel) const { return origin_s_ + pixel * seconds_per_pixel_; }

  // factor > 1 zooms in; the time at `anchor_pixel` stays there.
  void zoom_at(double anchor_pixel, double factor);
  // Content follows the pointer: dragging right by dx shows earlier times.
  void pan_pixels(double dx);
  // [start_s, end_s] fills `width_pixels`.
  void fit(double start_s, double end_s, double width_pixels);

  bool operator==(const TimeAxis&) const = default;

 private:
  double origin_s_ = 0.0;
  double seconds_per_pixel_ = 1e-6;
};

}  // namespace clustersim::gui
