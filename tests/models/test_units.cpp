// The strict unit parsers (models/units.hpp). Expected values are the unit definitions worked by
// hand: SI prefixes are powers of 1000, IEC prefixes (Ki, Mi, ...) powers of 1024, bits / 8.
#include <gtest/gtest.h>

#include <string>

#include "models/units.hpp"

namespace clustersim::models {
namespace {

TEST(Units, SizesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(parse_size("25MB"), 25e6);
  EXPECT_DOUBLE_EQ(parse_size("80GB"), 80e9);
  EXPECT_DOUBLE_EQ(parse_size("1.5TB"), 1.5e12);
  EXPECT_DOUBLE_EQ(parse_size("512B"), 512.0);
  EXPECT_DOUBLE_EQ(parse_size("4KB"), 4000.0);
  EXPECT_DOUBLE_EQ(parse_size("4KiB"), 4096.0);           // 4 · 1024
  EXPECT_DOUBLE_EQ(parse_size("25MiB"), 26214400.0);      // 25 · 1024²
  EXPECT_DOUBLE_EQ(parse_size("1GiB"), 1073741824.0);     // 1024³
  EXPECT_DOUBLE_EQ(parse_size("2TiB"), 2199023255552.0);  // 2 · 1024⁴
  EXPECT_DOUBLE_EQ(parse_size("0B"), 0.0);
  EXPECT_DOUBLE_EQ(parse_size("1e3MB"), 1e9);  // exponent in the number
}

TEST(Units, BandwidthsInBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("900GB/s").bytes_per_second(), 900e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("2.0TB/s").bytes_per_second(), 2e12);
  // InfiniBand HDR: 200 Gbit/s = 200e9 / 8 = 25e9 bytes/s.
  EXPECT_DOUBLE_EQ(parse_bandwidth("200Gb/s").bytes_per_second(), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Mb/s").bytes_per_second(), 12.5e6);         // 100e6 / 8
  EXPECT_DOUBLE_EQ(parse_bandwidth("25GiB/s").bytes_per_second(), 26843545600.0);  // 25 · 1024³
  EXPECT_DOUBLE_EQ(parse_bandwidth("8b/s").bytes_per_second(), 1.0);
}

TEST(Units, TimesToPicoseconds) {
  EXPECT_EQ(parse_time("2us").ps(), 2'000'000);  // 2 · 10⁶ ps
  EXPECT_EQ(parse_time("1.5ms").ps(), 1'500'000'000);
  EXPECT_EQ(parse_time("500ns").ps(), 500'000);
  EXPECT_EQ(parse_time("1s").ps(), 1'000'000'000'000);
  EXPECT_EQ(parse_time("0.1us").ps(), 100'000);
  EXPECT_EQ(parse_time("7ps").ps(), 7);
}

TEST(Units, PlainNumbers) {
  EXPECT_DOUBLE_EQ(parse_number("1e11"), 1e11);
  EXPECT_DOUBLE_EQ(parse_number("312"), 312.0);
  EXPECT_DOUBLE_EQ(parse_number("0.5"), 0.5);
  EXPECT_THROW(parse_number("12k"), UnitError);
  EXPECT_THROW(parse_number("-1"), UnitError);
}

// Each bad input must fail, and the message must say what the allowed forms are.
void expect_error(void (*parse)(std::string_view), const std::string& text,
                  const std::string& fragment) {
  try {
    parse(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const UnitError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "'" << text << "': " << e.what();
  }
}
void size(std::string_view t) {
  parse_size(t);
}
void bandwidth(std::string_view t) {
  parse_bandwidth(t);
}
void time(std::string_view t) {
  parse_time(t);
}

TEST(Units, RejectsMalformedSizes) {
  expect_error(size, "25", "a unit is required; allowed units: B, KB");
  expect_error(size, "25 MB", "without a space");
  expect_error(size, "MB25", "must start with a number");
  expect_error(size, "25mb", "unknown unit 'mb'");
  expect_error(size, "25Gb", "unknown unit 'Gb'");  // bits are not a size
  expect_error(size, "-4GB", "negative");
  expect_error(size, "nan", "finite");
  expect_error(size, "infGB", "finite");
  expect_error(size, "", "empty");
  expect_error(size, "+4GB", "without sign");
  expect_error(size, "1e999GB", "out of range");
}

TEST(Units, RejectsMalformedBandwidthsAndTimes) {
  expect_error(bandwidth, "900GB", "unknown unit 'GB'; allowed units: B/s");
  expect_error(bandwidth, "200Gbps", "unknown unit 'Gbps'");
  expect_error(bandwidth, "200", "a unit is required");
  expect_error(bandwidth, "/s", "must start with a number");
  expect_error(time, "2", "a unit is required; allowed units: ps, ns, us, ms, s");
  expect_error(time, "2sec", "unknown unit 'sec'");
  expect_error(time, "-1us", "negative");
  expect_error(time, "1e9s", "too long");  // beyond int64 picoseconds (~106 days)
}

}  // namespace
}  // namespace clustersim::models
