// Strong types for the quantities that are easy to mix up: simulated time and bandwidth.
// Inside the code everything is SI: seconds, bytes, bytes per second, FLOP per second.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::engine {

// Simulated time: a signed 64-bit count of picoseconds (±106 days), so ordering and equality are
// exact and a run is reproducible bit for bit. Arithmetic that would pass the end of the clock
// stops at end_of_clock() instead of wrapping to a negative time, and the simulator reports a
// run that reaches it (ClockOverflow) rather than printing a wrapped figure.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  // Rounds to the nearest picosecond; durations are never negative. Past the clock (or NaN):
  // end_of_clock().
  static Time from_seconds(double s) {
    const double ps = s * 1e12;
    if (!(ps < kEndPs) || !(ps > -kEndPs)) return ps < 0 ? Time(-kEnd) : end_of_clock();
    return Time(static_cast<std::int64_t>(std::llround(ps)));
  }
  static constexpr Time zero() { return Time(0); }
  // "Never" (no event); not an instant a run reaches.
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }
  // The last instant the clock can hold (about 106 days); saturated arithmetic ends here.
  static constexpr Time end_of_clock() { return Time(kEnd); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const {
    std::int64_t r = 0;
    return __builtin_add_overflow(ps_, o.ps_, &r) ? saturated(o.ps_ > 0) : Time(r);
  }
  constexpr Time operator-(Time o) const {
    std::int64_t r = 0;
    return __builtin_sub_overflow(ps_, o.ps_, &r) ? saturated(o.ps_ < 0) : Time(r);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(std::int64_t k) const {
    std::int64_t r = 0;
    return __builtin_mul_overflow(ps_, k, &r) ? saturated((ps_ < 0) == (k < 0)) : Time(r);
  }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  static constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max() - 1;
  static constexpr double kEndPs = 9.2e18;  // a double just below kEnd
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  static constexpr Time saturated(bool up) { return Time(up ? kEnd : -kEnd); }
  std::int64_t ps_ = 0;
};

// Bandwidth in bytes per second, per direction.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gigabytes_per_second(double v) { return Bandwidth(v * 1e9); }
  static constexpr Bandwidth gigabits_per_second(double v) { return Bandwidth(v * 1e9 / 8.0); }

  constexpr double bytes_per_second() const { return bps_; }
  constexpr auto operator<=>(const Bandwidth&) const = default;
  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(bps_ / k); }

 private:
  constexpr explicit Bandwidth(double v) : bps_(v) {}
  double bps_ = 0.0;
};

// Time to move `bytes` at `bw`, rounded up to the next picosecond so a transfer never ends early.
inline Time transfer_time(double bytes, Bandwidth bw) {
  if (bytes <= 0.0) return Time::zero();
  const double ps = std::ceil(bytes / bw.bytes_per_second() * 1e12);
  if (!(ps < 9.2e18)) return Time::end_of_clock();  // a transfer longer than the clock (or NaN)
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

}  // namespace clustersim::engine
