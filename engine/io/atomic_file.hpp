// Outputs are written atomically: to a temporary file beside the target, then renamed over it, so
// a crash or Ctrl-C never leaves a half-written result and readers never see one.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace clustersim::engine {

// Calls `write` with a stream to a temporary file in the target's directory, then renames it to
// `path`. A symbolic link is followed (the link survives, its target is replaced); a special file
// (/dev/null, a FIFO) is written into directly, never replaced. Throws std::runtime_error naming
// the path when it cannot be written. While it writes, the temporary file is registered so that
// the handler of install_interrupt_cleanup() can remove it.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Whether `path` is under /dev or /proc (/dev/stdout, /dev/fd/3, /proc/self/fd/1, /dev/null):
// it names an open descriptor or a device, and is written into (appended to), never replaced,
// whatever it resolves to.
bool names_a_descriptor(const std::string& path);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files being written
// (a trace can be hundreds of MB) and exit with 128 + the signal (130 for SIGINT, 143 for
// SIGTERM), as shells report a process killed by it. For programs, not libraries: call it once
// from main().
void install_interrupt_cleanup();

}  // namespace clustersim::engine
