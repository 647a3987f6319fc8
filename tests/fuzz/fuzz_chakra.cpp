// libFuzzer target: bytes as a Chakra trace (PREFIX.0.et of a one-GPU world) → the importer of
// `workload: {chakra: PREFIX}`. Bad input must be a ChakraError; any other exception escapes and
// libFuzzer reports it as a crash. The importer reads files, so each input is written to one.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/chakra/chakra_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim::models::chakra;
  static const std::string prefix = (std::filesystem::temp_directory_path() /
                                     ("clustersim-fuzz-chakra-" + std::to_string(getpid())))
                                        .string();
  // Removed at exit (libFuzzer and the replay both return through exit()).
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static const Remove cleanup{prefix + ".0.et"};
  {
    std::ofstream out(cleanup.path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)import_chakra(prefix, "", 1);
  } catch (const ChakraError&) {
  }
  return 0;
}
