#include "models/sweep_process.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>

namespace clustersim::models {

namespace {

// Pipes are made and children forked one at a time, and the parent closes a pipe's write end
// before the next fork: so no child inherits another child's write end, which would keep that
// pipe open (no end-of-file for its reader) until the wrong child ends.
std::mutex sweep_child_fork_mutex;

constexpr int kSweepChildPollMs = 100;     // how often a waiting parent looks at `cancel`
constexpr int kSweepChildWriteFailed = 3;  // the child's exit status when its pipe broke

bool sweep_child_write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// In the child: run, send the row, end without running the parent's exit handlers or destructors
// (they belong to the parent's threads and files).
[[noreturn]] void sweep_child_main(int fd, pid_t parent, const SweepPoint& point,
                                   const std::function<SweepRow()>& body) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::signal(sig, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kSweepChildWriteFailed);  // the parent is gone already
  std::string text;
  try {
    text = row_to_json(body()).dump();
  } catch (const std::exception& e) {
    SweepRow row{point.index, point.values, SweepStatus::failed, e.what(),
                 nlohmann::ordered_json::object()};
    text = row_to_json(row).dump();
  }
  const bool sent = sweep_child_write_all(fd, text);
  ::close(fd);
  ::_exit(sent ? 0 : kSweepChildWriteFailed);
}

std::string sweep_child_status(pid_t pid, int status) {
  const std::string who = "the point's child process (pid " + std::to_string(pid) + ")";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::sigabbrev_np(sig);
    const char* what = ::sigdescr_np(sig);
    return who + " was killed by signal " + std::to_string(sig) +
           (name != nullptr ? " (SIG" + std::string(name) + ": " + (what ? what : "") + ")" : "");
  }
  if (WIFEXITED(status)) return who + " exited with status " + std::to_string(WEXITSTATUS(status));
  return who + " ended abnormally (wait status " + std::to_string(status) + ")";
}

SweepRow sweep_child_failed(const SweepPoint& point, std::string reason) {
  return SweepRow{point.index, point.values, SweepStatus::failed, std::move(reason),
                  nlohmann::ordered_json::object()};
}

}  // namespace

SweepRow run_row_in_child_process(const SweepPoint& point, const std::function<SweepRow()>& body,
                                  const std::atomic<bool>* cancel) {
  int fds[2] = {-1, -1};
  pid_t pid = -1;
  {
    const std::lock_guard lock(sweep_child_fork_mutex);
    if (::pipe(fds) != 0)
      return sweep_child_failed(point, std::string("cannot make a pipe for the point's child "
                                                   "process: ") +
                                           std::strerror(errno));
    const pid_t parent = ::getpid();
    pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      sweep_child_main(fds[1], parent, point, body);
    }
    ::close(fds[1]);
    if (pid < 0) {
      const int error = errno;
      ::close(fds[0]);
      return sweep_child_failed(
          point,
          std::string("cannot start the point's child process (fork): ") + std::strerror(error));
    }
  }

  std::string text;
  bool cancelled = false;
  char buffer[65536];
  while (true) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      ::kill(pid, SIGKILL);
      cancelled = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, kSweepChildPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: the child closed its end or died
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (cancelled) return sweep_child_failed(point, "cancelled");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return sweep_child_failed(
        point, sweep_child_status(pid, status) + (text.empty() ? ", without a result" : ""));
  try {
    SweepRow row = row_from_json(nlohmann::ordered_json::parse(text));
    if (row.index != point.index || row.values != point.values)
      return sweep_child_failed(
          point, sweep_child_status(pid, status) + " but sent the row of another point");
    return row;
  } catch (const nlohmann::json::exception& e) {
    return sweep_child_failed(
        point, sweep_child_status(pid, status) + " but sent no readable result: " + e.what());
  }
}

}  // namespace clustersim::models
