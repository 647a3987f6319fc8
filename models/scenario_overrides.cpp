// `--set path=value` overrides, applied to the YAML tree before anything is read so that an
// overridden value goes through exactly the same checks as one written in the file.
#include <cctype>

#include "models/scenario_detail.hpp"

namespace clustersim::models::detail {
namespace {

[[noreturn]] void bad_flag(const std::string& flag, const std::string& message) {
  yaml::throw_error({"--set " + flag, 0, 0}, "", message);
}

bool valid_segment(const std::string& segment) {
  if (segment.empty()) return false;
  for (const char c : segment)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

void apply_override(YAML::Node& root, const std::string& flag, yaml::Source& source) {
  const std::size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0)
    bad_flag(flag, "expected KEY.PATH=VALUE, e.g. --set parallel.tp=4");
  const std::string path = flag.substr(0, eq);
  std::vector<std::string> segments;
  for (std::size_t begin = 0;;) {
    const std::size_t dot = path.find('.', begin);
    segments.push_back(path.substr(begin, dot - begin));
    if (!valid_segment(segments.back()))
      bad_flag(flag, "'" + path +
                         "' is not a key path; allowed: names of letters, digits, '_' "
                         "and '-' joined by '.', e.g. cluster.network.latency");
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  YAML::Node value;
  try {
    value = YAML::Load(flag.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    bad_flag(flag, "the value is not valid YAML: " + e.msg);
  }
  source.add_override(path, "--set " + flag);

  YAML::Node current = root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
    const std::string& key = segments[i];
    walked += (walked.empty() ? "" : ".") + key;
    YAML::Node child = current[key];
    if (!child.IsDefined() || child.IsNull()) {
      current[key] = YAML::Node(YAML::NodeType::Map);
    } else if (child.IsScalar()) {
      // `model: gpt3-175b` + `--set model.num_layers=4`: the preset becomes the base of a map.
      YAML::Node expanded(YAML::NodeType::Map);
      expanded["preset"] = child.Scalar();
      current[key] = expanded;
    } else if (child.IsSequence()) {
      bad_flag(flag, walked + " is a list; overrides can only set keys of maps");
    }
    YAML::Node next = current[key];
    current.reset(next);  // reset(), not operator=, which would overwrite the node's content
  }
  current[segments.back()] = value;
}

}  // namespace clustersim::models::detail
