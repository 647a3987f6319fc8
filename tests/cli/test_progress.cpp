// cli::Progress, the one progress reporter of `clustersim run` and the calibration back ends:
// quiet for the first second, one line per report in a log (at most every 5 s), a line redrawn
// in place on a terminal (at most every 200 ms), with an optional phase after the percentage; and
// cli::PhaseProgress, which redraws it while a long phase reports nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "cli/phase_progress.hpp"
#include "cli/progress.hpp"

namespace clustersim::cli {
namespace {

using namespace std::chrono_literals;

// What a reporter wrote to its stream.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::FILE* file() const { return file_; }
  std::string text() const {
    std::fflush(file_);
    std::rewind(file_);
    std::string s;
    for (int c = std::fgetc(file_); c != EOF; c = std::fgetc(file_))
      s += static_cast<char>(c);
    return s;
  }

 private:
  std::FILE* file_;
};

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

TEST(Progress, QuietDuringTheFirstSecond) {
  const Capture out;
  {
    Progress p("simulating x", out.file(), false);
    p.update(0.5);
    p.update(3, 4, "all_reduce");
  }
  EXPECT_EQ(out.text(), "");
}

TEST(Progress, ALogGetsOneLinePerReportWithThePhase) {
  const Capture out;
  Progress p("calibrating (mpi)", out.file(), false, 0ms);
  p.update(3, 4, "all_reduce");  // 3 of 4 steps: 75 %
  p.update(4, 4, "reduce");      // within 5 s of the last line: not printed
  p.update(1, 0, "nothing");     // no total: nothing to report
  p.done();
  const std::string text = out.text();
  EXPECT_TRUE(starts_with(text, "calibrating (mpi):  75% (")) << text;
  EXPECT_TRUE(ends_with(text, " s) all_reduce\n")) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;  // one line only
}

TEST(Progress, ATerminalLineIsRedrawnInPlaceAndBlanksALongerOne) {
  const Capture out;
  Progress p("run", out.file(), true, 0ms);
  p.update(0.5, "a long phase name");
  std::this_thread::sleep_for(210ms);  // a terminal is redrawn at most every 200 ms
  p.update(1.0);
  p.done();
  const std::string text = out.text();
  const std::size_t second = text.find('\r', 1);
  ASSERT_EQ(text.front(), '\r') << text;
  ASSERT_NE(second, std::string::npos) << text;
  const std::string first_line = text.substr(1, second - 1);
  const std::string second_line = text.substr(second + 1, text.size() - second - 2);
  EXPECT_TRUE(starts_with(first_line, "run:  50% (")) << first_line;
  EXPECT_TRUE(ends_with(first_line, " s) a long phase name")) << first_line;
  EXPECT_TRUE(starts_with(second_line, "run: 100% (")) << second_line;
  // Padded with blanks to the first line's length, so none of "a long phase name" remains.
  EXPECT_EQ(second_line.size(), first_line.size()) << second_line;
  EXPECT_TRUE(
      ends_with(second_line, " s)" + std::string(std::string(" a long phase name").size(), ' ')))
      << second_line;
  EXPECT_EQ(text.back(), '\n');  // done() ends the line
}

TEST(Progress, APhaseThatCannotTellShowsOnlyTheTime) {
  const Capture out;
  Progress p("run", out.file(), false, 0ms);
  p.update(models::kUnknownFraction, "building");
  const std::string text = out.text();
  EXPECT_TRUE(starts_with(text, "run: (0.")) << text;
  EXPECT_TRUE(ends_with(text, " s) building\n")) << text;
  EXPECT_EQ(text.find('%'), std::string::npos) << text;
}

TEST(PhaseProgress, ALongPhaseThatReportsNothingIsRedrawnWithTheClockMoving) {
  const Capture out;
  {
    // Reports once, then nothing for 0.7 s: the ticker redraws the line (a terminal's at most
    // every 200 ms), so at least three lines, the last one later than the first.
    PhaseProgress p("run", out.file(), true, 0ms, 10ms);
    p.callback()("building", models::kUnknownFraction);
    std::this_thread::sleep_for(700ms);
  }
  const std::string text = out.text();
  EXPECT_GE(std::count(text.begin(), text.end(), '\r'), 3) << text;
  EXPECT_TRUE(starts_with(text, "\rrun: (0.0 s) building")) << text;
  const std::size_t last = text.rfind('\r');
  EXPECT_FALSE(starts_with(text.substr(last), "\rrun: (0.0 s)")) << text;
  EXPECT_TRUE(ends_with(text, " s) building\n")) << text;  // the destructor ends the line
}

TEST(PhaseProgress, EachPhaseReplacesTheLastAndDoneStopsTheRedrawing) {
  const Capture out;
  PhaseProgress p("run", out.file(), false, 0ms, 10ms);
  const models::ProgressFn report = p.callback();
  report("simulating", 0.25);
  p.done();
  std::this_thread::sleep_for(50ms);  // no phase since done(): the ticker prints nothing
  const std::string text = out.text();
  EXPECT_TRUE(starts_with(text, "run:  25% (")) << text;
  EXPECT_TRUE(ends_with(text, " s) simulating\n")) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

}  // namespace
}  // namespace clustersim::cli
