// Start-up of the `clustersim` binary (issue 8): `clustersim --version` must stay under 20 ms,
// which it does only because the simulator links no GPU or MPI library.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

void BM_VersionStartup(benchmark::State& state) {
  for (auto _ : state) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::execl(CLUSTERSIM_BINARY, CLUSTERSIM_BINARY, "--version", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("--version failed");
  }
}
BENCHMARK(BM_VersionStartup)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
