// A progress indicator on stderr that appears only once a run has taken over a second.
#pragma once

#include <chrono>
#include <string>

namespace clustersim::cli {

class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  void update(double fraction);  // 0..1; cheap when nothing is printed
  void done();

 private:
  std::string what_;
  std::chrono::steady_clock::time_point began_;
  std::chrono::steady_clock::time_point last_print_;
  bool tty_ = false;
  bool printed_ = false;
};

}  // namespace clustersim::cli
