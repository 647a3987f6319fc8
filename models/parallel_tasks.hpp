// Independent tasks on a thread pool, with their failures brought back to the caller.
#pragma once

#include <cstddef>
#include <functional>

namespace clustersim::models {

// Runs task(i) for every i in [0, count) on up to `threads` threads (0 = every core) and returns
// once all have ended. An exception that escapes a Boost.Asio pool thread calls std::terminate, so
// each task's is caught: the first one thrown (the lowest index among those that threw, so that
// the error a user sees does not depend on timing) is rethrown here after the pool has joined.
void run_tasks_in_parallel(std::size_t count, unsigned threads,
                           const std::function<void(std::size_t)>& task);

}  // namespace clustersim::models
