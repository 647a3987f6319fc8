// One sweep point in a child process of its own (docs/sweeps.md "Network models that run once per
// process"): SimGrid's engine can be started once per process, so a sweep forks a child per simgrid
// point, the child runs the point and writes its row as JSON (row_to_json) into a pipe, and the
// parent reads it back (row_from_json). A child that dies by a signal, exits non-zero or sends
// no readable row becomes a `failed` row saying so; the parent never waits on a child that cannot
// end (the pipe's end-of-file and waitpid close every path; `cancel` kills the child).
//
//   SweepRow row = run_row_in_child_process(point, [&] { return run_here(request, point); },
//                                           request.cancel);
#pragma once

#include <atomic>
#include <functional>

#include "models/sweep.hpp"

namespace clustersim::models {

// Runs `body` in a forked child and returns the row it produced. In the child SIGINT, SIGTERM and
// SIGHUP are back to their defaults and the child dies with the thread that forked it
// (PR_SET_PDEATHSIG). Thread-safe: several threads may each run a child at once. When `cancel` is
// set while the child runs, the child is killed and the row is `failed` with reason "cancelled".
SweepRow run_row_in_child_process(const SweepPoint& point, const std::function<SweepRow()>& body,
                                  const std::atomic<bool>* cancel = nullptr);

}  // namespace clustersim::models
