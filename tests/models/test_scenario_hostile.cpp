// Bad input the loader used to accept or report late (issue 10, item 5): a second YAML document,
// bytes that are not UTF-8 text, a NUL byte, and collective algorithms that do not exist for
// their collective or the hardware. Each is a ScenarioError naming file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "engine/network/collectives.hpp"
#include "models/frontend.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "models/scenario_detail.hpp"

namespace clustersim::models {
namespace {

const std::string kValid =
    "cluster: {nodes: 2, node: dgx-h100, network: {sharp: true}}\n"  // 1
    "model: llama2-7b\n"                                             // 2
    "training: {global_batch: 16}\n";                                // 3

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "bad.yaml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ScenarioHostile, TheBaseIsValid) {
  EXPECT_EQ(error_of(kValid), "accepted");
}

TEST(ScenarioHostile, ASecondYamlDocumentIsRefusedWhereItStarts) {
  // It used to be ignored, broken or not.
  EXPECT_TRUE(error_of(kValid + "---\nname: other\n")
                  .starts_with("bad.yaml:5:1: a second YAML document; allowed: one document"))
      << error_of(kValid + "---\nname: other\n");
  // A broken second document is invalid YAML, not silently dropped.
  EXPECT_TRUE(error_of(kValid + "---\n{[broken\n").starts_with("bad.yaml:"))
      << error_of(kValid + "---\n{[broken\n");
}

TEST(ScenarioHostile, TextThatIsNotUtf8IsRefusedWhereItIs) {
  // A Latin-1 name used to reach the JSON writer after the whole simulation (a raw exception).
  const std::string latin1 = "name: caf\xE9\n" + kValid;
  EXPECT_EQ(error_of(latin1),
            "bad.yaml:1:10: byte 0xE9 is not UTF-8 text; allowed: UTF-8 (save the file as UTF-8)");
  // UTF-8 is fine, multi-byte characters count as one column.
  EXPECT_EQ(error_of("name: café ☕\n" + kValid), "accepted");
  EXPECT_TRUE(error_of("name: ☕\xFF\n" + kValid).starts_with("bad.yaml:1:8: byte 0xFF"));
  // Overlong encodings and lone surrogates are not UTF-8 either.
  EXPECT_NE(error_of("name: \xC0\xAF\n" + kValid).find("byte 0xC0 is not UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of("name: \xED\xA0\x80\n" + kValid).find("byte 0xED is not UTF-8"),
            std::string::npos);
}

TEST(ScenarioHostile, ANulByteIsRefusedWhereItIs) {
  const std::string text = std::string("name: a\0b\n", 10) + kValid;
  EXPECT_EQ(error_of(text), "bad.yaml:1:8: a NUL byte; allowed: UTF-8 text");
  EXPECT_EQ(error_of(kValid, {std::string("name=a\xE9")}),
            "--set name=a\xE9: byte 0xE9 is not UTF-8 text; allowed: UTF-8 (save the file as "
            "UTF-8)");
}

TEST(ScenarioHostile, AnAlgorithmThatDoesNotExistForItsCollectiveIsAnErrorAtLoad) {
  // It used to fail inside the simulation, after building: "simulate: ... does not exist".
  const std::string m = error_of(kValid + "simulation: {algorithms: {all_to_all: tree}}\n");
  EXPECT_EQ(m,
            "bad.yaml:4:27: simulation.algorithms.all_to_all: tree all_to_all does not exist; "
            "allowed: auto | ring | direct");
  EXPECT_NE(error_of(kValid + "simulation: {algorithms: {send_recv: hierarchical}}\n")
                .find("simulation.algorithms.send_recv: hierarchical send_recv does not exist"),
            std::string::npos);
}

TEST(ScenarioHostile, AnAlgorithmTheHardwareLacksIsAnErrorAtLoad) {
  const std::string a100 =
      "cluster: {nodes: 2, node: dgx-a100}\nmodel: llama2-7b\ntraining: {global_batch: 16}\n";
  EXPECT_NE(error_of(a100 + "simulation: {algorithms: {all_reduce: nvls}}\n")
                .find("simulation.algorithms.all_reduce: nvls needs NVSwitch gen 3+"),
            std::string::npos);
  EXPECT_NE(error_of(a100 + "simulation: {algorithms: {all_reduce: collnet}}\n")
                .find("simulation.algorithms.all_reduce: collnet needs a SHARP fabric"),
            std::string::npos);
  EXPECT_EQ(error_of(kValid + "simulation: {algorithms: {all_reduce: collnet}}\n"), "accepted");
}

// The loader's table agrees with the engine's plans, so it cannot drift from them: on hardware
// that has NVLS and SHARP, a combination the table accepts has a plan, one it refuses throws.
TEST(ScenarioHostile, TheAlgorithmTableMatchesTheEnginesPlans) {
  const Scenario s = parse_scenario(kValid, "ok.yaml");
  const engine::Topology topo = build_topology(s);
  std::vector<engine::EndpointId> all(16);
  std::iota(all.begin(), all.end(), 0);
  const std::vector<engine::EndpointId> pair = {0, 8};
  for (const auto& [type, type_name] : engine::kCollectiveTypeNames.entries())
    for (const auto& [algorithm, name] : engine::kAlgorithmNames.entries()) {
      if (algorithm == engine::Algorithm::automatic) continue;
      const auto& members = type == engine::CollectiveType::send_recv ? pair : all;
      bool exists = true;
      try {
        engine::plan_collective(type, algorithm, members, 0, topo);
      } catch (const std::invalid_argument&) {
        exists = false;
      }
      EXPECT_EQ(detail::algorithm_exists(type, algorithm), exists) << name << " " << type_name;
    }
}

TEST(ScenarioHostile, SelectiveRecomputeOnALayerListIsAnError) {
  // It used to be accepted and do nothing.
  const std::string text =
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {layers: [{name: b, params: 1e6, forward_flops: 1e9, repeat: 4}]}\n"
      "training: {global_batch: 8, recompute: selective}\n";
  EXPECT_EQ(error_of(text),
            "bad.yaml:3:29: training.recompute: selective recompute needs a transformer (it "
            "chooses which of a block's ops to recompute; a generic layer has none); allowed: "
            "none | full");
}

TEST(ScenarioHostile, AGpuWithoutAnyPeakSaysWhatToGive) {
  // "allowed: " used to be followed by nothing.
  const std::string m = error_of(kValid, {"cluster.gpu={peak_tflops: {bf16: 0}}"});
  EXPECT_NE(m.find("training.precision: GPU H100-SXM5-80GB has no bf16 peak FLOP/s figure"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("allowed: none: give cluster.gpu.peak_tflops a figure > 0"), std::string::npos)
      << m;
}

TEST(ScenarioHostile, AHugeCountInAConfigJsonIsBoundedBeforeNarrowing) {
  // 2^32 + 2 layers used to narrow to 2 layers.
  const auto path = std::filesystem::temp_directory_path() /
                    ("clustersim-hostile-" + std::to_string(::getpid()) + "-config.json");
  std::ofstream(path) << R"({"num_hidden_layers": 4294967298, "hidden_size": 4096,
    "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008})";
  const std::string m =
      error_of("cluster: {nodes: 1, node: dgx-a100}\nmodel: {hf_config: " + path.string() +
               "}\ntraining: {global_batch: 8, seq_len: 2048}\n");
  std::filesystem::remove(path);
  EXPECT_NE(m.find("'num_hidden_layers' = 4294967298 is out of range; allowed: at most 16777216"),
            std::string::npos)
      << m;
}

std::vector<std::string> notes_of(const std::vector<std::string>& overrides) {
  RunRequest request;
  request.scenario = CLUSTERSIM_TEST_DATA "/calibration/ddp_a100x8.yaml";  // an A100 profile
  request.overrides = overrides;
  return predict(request).output.result.notes;
}

TEST(ScenarioHostile, AProfileFromAnotherGpuGetsANote) {
  // It used to be applied without a word.
  const auto mismatch = [](const std::vector<std::string>& notes) {
    for (const auto& n : notes)
      if (n.find("was measured on") != std::string::npos) return n;
    return std::string();
  };
  EXPECT_EQ(mismatch(notes_of({})), "");
  EXPECT_EQ(mismatch(notes_of({"cluster.node=dgx-h100"})),
            "profile a100x8_allreduce.json was measured on NVIDIA A100-SXM4-80GB, not on the "
            "scenario's H100-SXM5-80GB: its figures may not hold for this GPU");
}

TEST(ScenarioHostile, NestingTooDeepSaysSo) {
  // yaml-cpp's own message was "bad file".
  const std::string deep = "name: " + std::string(600, '[') + std::string(600, ']') + "\n";
  const std::string m = error_of(deep + kValid);
  EXPECT_TRUE(m.starts_with("bad.yaml:1:")) << m;
  EXPECT_NE(m.find("invalid YAML: nested deeper than yaml-cpp's limit of"), std::string::npos) << m;
}

}  // namespace
}  // namespace clustersim::models
