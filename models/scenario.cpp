// Loading a scenario: YAML text -> overrides -> section readers -> plan checks.
#include "models/scenario.hpp"

#include <fstream>
#include <sstream>

#include "models/scenario_detail.hpp"

namespace clustersim::models {

void Scenario::fail(const std::string& key, const std::string& message) const {
  // A key that was never written (a default) is blamed on the nearest section that was.
  for (std::string k = key; !k.empty();) {
    if (const auto it = locations.find(k); it != locations.end())
      yaml::throw_error(it->second, key, message);
    const std::size_t dot = k.find_last_of(".[");
    k = dot == std::string::npos ? "" : k.substr(0, dot);
  }
  yaml::throw_error({file, 0, 0}, key, message);
}

Scenario parse_scenario(const std::string& text, const std::string& origin,
                        const std::vector<std::string>& overrides) {
  Scenario s;
  s.file = origin;
  yaml::Source source(origin, &s.locations);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    yaml::throw_error({origin, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);  // empty file
  if (!root.IsMap()) yaml::Value(source, root, "").map();  // fails: "expected a map ..."
  for (const std::string& flag : overrides)
    detail::apply_override(root, flag, source);

  const std::filesystem::path base_dir = std::filesystem::path(origin).parent_path();
  try {
    yaml::MapReader m = yaml::Value(source, root, "").map();
    s.name = std::filesystem::path(origin).stem().string();
    if (auto x = m.get("name")) s.name = x->text();
    const char* cluster_hint = "a cluster, e.g. {nodes: 2, node: dgx-a100}";
    s.cluster = detail::read_cluster(m.require("cluster", cluster_hint));
    s.model = detail::read_model(m.require("model", "a preset name, a transformer or a layer list"),
                                 base_dir);
    s.training = detail::read_training(
        m.require("training", "training settings, e.g. {global_batch: 512, seq_len: 2048}"),
        s.model);
    if (auto x = m.get("parallel"))
      s.parallel = detail::read_parallel(*x);
    else
      s.parallel.dp = 0;
    s.simulation = detail::read_simulation(m.get("simulation"), base_dir);
    if (auto x = m.get("published")) s.published = detail::read_published(*x);
    m.finish();
  } catch (const YAML::Exception& e) {  // not expected; never let one escape as a crash
    yaml::throw_error({origin, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  detail::validate(s);
  for (const std::string& f : {s.file, s.simulation.calibration, s.model.config_file})
    if (!f.empty()) s.inputs.push_back(f);
  return s;
}

void validate_scenario(Scenario& scenario) {
  detail::validate(scenario);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const bool exists = std::filesystem::exists(path);
    yaml::throw_error({path, 0, 0}, "",
                      exists ? "cannot read the scenario file"
                             : "scenario file not found; allowed: a path to a YAML file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, overrides);
}

}  // namespace clustersim::models
