// Hand-written timelines for the GUI model tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/timeline.hpp"

namespace clustersim::gui::test {

// A timeline where op i of the schedule ran over [starts[i], ends[i]) picoseconds.
inline engine::Timeline timeline_of(const std::vector<std::int64_t>& starts,
                                    const std::vector<std::int64_t>& ends) {
  engine::Timeline tl;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    tl.start.push_back(engine::Time::from_ps(starts[i]));
    tl.launch.push_back(engine::Time::from_ps(starts[i]));
    tl.end.push_back(engine::Time::from_ps(ends[i]));
  }
  tl.makespan = engine::Time::from_ps(*std::max_element(ends.begin(), ends.end()));
  return tl;
}

}  // namespace clustersim::gui::test
