// libFuzzer target: a Perfetto protobuf trace → models::read_perfetto_trace, what clustersim-gui
// opens with File ▸ Open for a .pftrace. Read twice, with the size the front end passes and
// without. Bad input must be an engine::TraceError; any other exception escapes and libFuzzer
// reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "models/perfetto/perfetto_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (const bool known_size : {true, false}) {
    std::istringstream in(bytes);
    clustersim::engine::TraceReadOptions options;
    if (known_size) options.size_bytes = size;
    try {
      clustersim::models::read_perfetto_trace(in, "fuzz.pftrace", options);
    } catch (const clustersim::engine::TraceError&) {
    }
  }
  return 0;
}
