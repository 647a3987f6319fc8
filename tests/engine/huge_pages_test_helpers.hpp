// The kernel's view of an address: the VmFlags of the mapping that holds it, from
// /proc/self/smaps ("hg" marks a range advised MADV_HUGEPAGE), and whether this kernel offers
// transparent huge pages on request at all.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersim::test {

inline bool transparent_huge_pages_on_request() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(in, mode);
  return !mode.empty() && mode.find("[never]") == std::string::npos;
}

// The VmFlags line's flags of the mapping holding `p`, or "" where none holds it.
inline std::string vm_flags_at(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      const std::uintptr_t begin = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8);
    }
  }
  return "";
}

inline bool advised_huge(const void* p) {
  std::istringstream flags(vm_flags_at(p));
  std::string flag;
  while (flags >> flag)
    if (flag == "hg") return true;
  return false;
}

}  // namespace clustersim::test
