// Loading a scenario: YAML text -> overrides -> section readers -> plan checks.
#include "models/scenario.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <cstdio>
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

namespace {

// Length of the UTF-8 sequence at text[i], or 0 when it is not one (overlong forms, surrogates
// and code points past U+10FFFF included).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                  : c >= 0xE0 && c <= 0xEF ? 3
                  : c >= 0xF0 && c <= 0xF4 ? 4
                                           : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  const unsigned char d = byte(i + 1);
  if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
      (c == 0xF4 && d > 0x8F))
    return 0;
  return n;
}

// Text that is not UTF-8, or holds a NUL byte, used to reach the JSON writer (a raw library
// exception after the whole simulation) or YAML's escape errors; refused where it is written.
void check_text(std::string_view text, const std::string& origin, bool override_flag) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const SourceLocation at{origin, override_flag ? 0 : line, override_flag ? 0 : column};
    if (text[i] == '\0') yaml::throw_error(at, "", "a NUL byte; allowed: UTF-8 text");
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[i]));
      yaml::throw_error(at, "",
                        std::string("byte ") + hex +
                            " is not UTF-8 text; allowed: UTF-8 (save the file as UTF-8)");
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
}

// Where each document of a YAML stream begins (the mark of its first node), for at most two
// documents. YAML::LoadAll loops forever, allocating until the machine runs out of memory, on a
// token no rule consumes (", x" in yaml-cpp 0.7, Debian 12's; jbeder/yaml-cpp#1319;
// found by fuzzing; fixed upstream after 0.8.0); asking the parser for two documents is bounded.
class FirstNodes : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;

  void OnDocumentStart(const YAML::Mark&) override { started_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (started_) marks.push_back(m);
    started_ = false;
  }
  bool started_ = false;
};

// Refuses a second document (it used to be ignored, broken or not), and a token the parser
// cannot consume, which yaml-cpp would report as an endless run of empty documents.
void check_single_document(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  FirstNodes first;
  for (int k = 0; k < 2 && parser.HandleNextDocument(first); ++k) {
  }
  if (first.marks.size() < 2) return;
  const YAML::Mark& at = first.marks[1];
  const SourceLocation where{origin, at.line + 1, at.column + 1};
  if (at.pos == first.marks[0].pos && at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size())
    yaml::throw_error(where, "",
                      std::string("invalid YAML: unexpected '") + text[at.pos] +
                          "'; allowed: a YAML map of keys (docs/scenario.md)");
  yaml::throw_error(where, "",
                    "a second YAML document; allowed: one document per scenario file "
                    "(remove the '---' and what follows it)");
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& origin,
                        const std::vector<std::string>& overrides) {
  Scenario s;
  s.file = origin;
  yaml::Source source(origin, &s.locations);
  check_text(text, origin, false);
  for (const std::string& flag : overrides)
    check_text(flag, "--set " + flag, true);
  YAML::Node root;
  try {
    check_single_document(text, origin);
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message is "bad file".
    yaml::throw_error({origin, e.mark.line + 1, e.mark.column + 1}, "",
                      "invalid YAML: nested deeper than yaml-cpp's limit of " +
                          std::to_string(e.depth()) + " levels; allowed: fewer levels of nesting");
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
    s.cluster = detail::read_cluster(m.require("cluster", cluster_hint), base_dir);
    if (auto w = m.get("workload")) {
      // Chakra traces are the whole workload: what a model, a plan and training settings would
      // say, they say already.
      s.workload = detail::read_workload(*w, base_dir);
      for (const char* key : {"model", "training", "parallel"})
        if (auto x = m.get(key))
          x->fail(std::string("a Chakra workload (workload.chakra) replaces model, training and "
                              "parallel; allowed: remove '") +
                  key + "'");
    } else {
      s.model = detail::read_model(
          m.require("model", "a preset name, a transformer or a layer list"), base_dir);
      s.training = detail::read_training(
          m.require("training", "training settings, e.g. {global_batch: 512, seq_len: 2048}"),
          s.model);
      if (auto x = m.get("parallel"))
        s.parallel = detail::read_parallel(*x);
      else
        s.parallel.dp = 0;
    }
    s.simulation = detail::read_simulation(m.get("simulation"), base_dir);
    if (auto x = m.get("published")) s.published = detail::read_published(*x);
    m.finish();
  } catch (const YAML::Exception& e) {  // not expected; never let one escape as a crash
    yaml::throw_error({origin, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  detail::validate(s);
  for (const std::string& f :
       {s.file, s.simulation.calibration, s.model.config_file, s.workload.comm_groups})
    if (!f.empty()) s.inputs.push_back(f);
  // The traces too: an output named like one must not replace it.
  if (s.workload.from_chakra())
    for (std::int64_t r = 0; r < s.world_size(); ++r)
      s.inputs.push_back(s.workload.chakra + "." + std::to_string(r) + ".et");
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
