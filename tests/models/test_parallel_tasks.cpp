// run_tasks_in_parallel (models/parallel_tasks.hpp): every task runs, and a task's exception
// reaches the caller instead of ending the process from a pool thread.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "models/parallel_tasks.hpp"

namespace clustersim::models {
namespace {

TEST(ParallelTasks, EveryTaskRunsOnce) {
  std::vector<std::atomic<int>> runs(100);
  run_tasks_in_parallel(runs.size(), 4, [&](std::size_t i) { ++runs[i]; });
  for (const auto& r : runs)
    EXPECT_EQ(r.load(), 1);
}

TEST(ParallelTasks, TheLowestThrowingTaskIsRethrownAfterAllHaveRun) {
  std::atomic<int> ran{0};
  // Tasks 3 and 7 throw, on 2 threads; the other 8 still run, and task 3's error is the one
  // reported whichever finished first.
  for (int attempt = 0; attempt < 20; ++attempt) {
    ran = 0;
    try {
      run_tasks_in_parallel(10, 2, [&](std::size_t i) {
        ++ran;
        if (i == 3 || i == 7) throw std::runtime_error("task " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "task 3");
    }
    EXPECT_EQ(ran.load(), 10);
  }
}

TEST(ParallelTasks, NoTasksIsNoWork) {
  bool called = false;
  run_tasks_in_parallel(0, 0, [&](std::size_t) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace clustersim::models
