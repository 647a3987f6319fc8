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
// the path when it cannot be written.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace clustersim::engine
