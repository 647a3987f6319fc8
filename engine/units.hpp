// Strong types for the quantities that are easy to mix up: simulated time and bandwidth.
// Inside the code everything is SI: seconds, bytes, bytes per second, FLOP per second.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::engine {

// Simulated time: a signed 64-bit count of picoseconds (±106 days), so ordering and equality are
// exact and a run is reproducible bit for bit.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  // Rounds to the nearest picosecond; durations are never negative.
  static Time from_seconds(double s) {
    return Time(static_cast<std::int64_t>(std::llround(s * 1e12)));
  }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
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
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

}  // namespace clustersim::engine
