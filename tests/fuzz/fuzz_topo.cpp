// libFuzzer target: `nvidia-smi topo -m` text → the parser and the node description that
// `clustersim import-topo` and `node: {from_topo: FILE}` derive from it. Bad input must be a
// TopoParseError; any other exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "models/topo_node.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace clustersim::models;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const TopoNode node = node_from_topo(parse_nvidia_smi_topo(in, "topo.txt"), nullptr);
    (void)topo_cluster_yaml(node, "topo.txt", "");
  } catch (const TopoParseError&) {
  }
  return 0;
}
