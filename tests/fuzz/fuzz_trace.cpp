// libFuzzer target: a Chrome trace JSON → engine::read_trace, what clustersim-gui opens with
// File ▸ Open. Bad input must be an engine::TraceError; any other exception escapes and libFuzzer
// reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "engine/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  clustersim::engine::TraceReadOptions options;
  options.size_bytes = size;  // as the front end passes it
  try {
    clustersim::engine::read_trace(in, "fuzz.json", options);
  } catch (const clustersim::engine::TraceError&) {
  }
  return 0;
}
