#include "models/parallel_tasks.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <exception>
#include <thread>
#include <vector>

namespace clustersim::models {

void run_tasks_in_parallel(std::size_t count, unsigned threads,
                           const std::function<void(std::size_t)>& task) {
  if (count == 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::exception_ptr> failures(count);  // one slot a task: no lock needed
  {
    boost::asio::thread_pool pool(std::min<std::size_t>(threads, count));
    for (std::size_t i = 0; i < count; ++i)
      boost::asio::post(pool, [&task, &failures, i] {
        try {
          task(i);
        } catch (...) {
          failures[i] = std::current_exception();
        }
      });
    pool.join();
  }
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace clustersim::models
