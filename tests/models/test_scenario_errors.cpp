// Malformed scenarios: each must fail with "FILE:LINE:COL: KEY.PATH: ..." naming the file, the
// line where the culprit is written (counted by hand in the snippet) and the key path, and say
// what is allowed.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario.hpp"
#include "models/scenario_detail.hpp"
#include "tests/models/scenario_error_check.hpp"

namespace clustersim::models {
namespace {

const std::string kData = CLUSTERSIM_TEST_DATA "/scenarios/";

// A valid base: 2 DGX A100 (16 GPUs), GPT-3 175B, tp 8 · pp 2 -> dp 1. Lines 1-11.
std::string base(const std::string& parallel_extra = "", const std::string& tail = "") {
  return "name: t\n"               // 1
         "cluster:\n"              // 2
         "  nodes: 2\n"            // 3
         "  node: dgx-a100\n"      // 4
         "model: gpt3-175b\n"      // 5
         "training:\n"             // 6
         "  global_batch: 64\n"    // 7
         "  seq_len: 2048\n"       // 8
         "parallel:\n"             // 9
         "  tp: 8\n"               // 10
         "  pp: 2\n"               // 11
         + parallel_extra + tail;  // 12 onwards
}

TEST(ScenarioErrors, BaseIsValid) {
  EXPECT_EQ(parse_scenario(base(), "ok.yaml").parallel.dp, 1);
}

TEST(ScenarioErrors, UnknownKeySuggestsTheNearest) {
  expect_error(base("  tpp: 2\n"), "bad.yaml:12:3", "parallel.tpp",
               "unknown key (did you mean 'tp'?); allowed: bucket_mb, cp, cp_comm, data_parallel");
}

TEST(ScenarioErrors, UnknownTopLevelKey) {
  expect_error(base("", "simulaton: {iterations: 2}\n"), "bad.yaml:12:1", "simulaton",
               "did you mean 'simulation'?");
}

TEST(ScenarioErrors, WrongType) {
  expect_error("cluster: {nodes: two, node: dgx-a100}\n", "bad.yaml:1:18", "cluster.nodes",
               "'two' is not an integer; allowed: integers from 1 to 65536");
  expect_error(base("  overlap: yes\n"), "bad.yaml:12:12", "parallel.overlap",
               "allowed: true | false");
  expect_error(base("  order: dp\n"), "bad.yaml:12:10", "parallel.order", "expected a list");
}

TEST(ScenarioErrors, BadUnit) {
  expect_error("cluster:\n  node: dgx-a100\n  network: {latency: 2}\nmodel: gpt3-175b\n",
               "bad.yaml:3:22", "cluster.network.latency",
               "a unit is required; allowed units: ps, ns, us, ms, s");
}

TEST(ScenarioErrors, BadUnitInAFileCitesThatFile) {
  const std::string file = kData + "bad_unit.yaml";
  try {
    load_scenario(file);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with(file + ":6:20: cluster.network.nic_bandwidth: "))
        << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown unit 'Gb'"), std::string::npos) << e.what();
  }
}

TEST(ScenarioErrors, UnknownPresetsListTheKnownOnes) {
  expect_error("cluster: {node: dgx-a1000}\n", "bad.yaml:1:17", "cluster.node",
               "unknown node preset 'dgx-a1000' (did you mean 'dgx-a100'?); allowed: ");
  expect_error(base().replace(base().find("gpt3-175b"), 9, "gpt5"), "bad.yaml:5:8", "model",
               "unknown model preset 'gpt5'");
  expect_error("cluster: {nodes: 1, gpus_per_node: 8, gpu: B9000}\n", "bad.yaml:1:44",
               "cluster.gpu", "unknown GPU preset 'B9000' (did you mean 'B200'?); allowed: ");
}

TEST(ScenarioErrors, MissingFiles) {
  expect_error(base("", "simulation: {calibration: nowhere.json}\n"), "bad.yaml:12:27",
               "simulation.calibration", "file 'nowhere.json' not found");
  expect_error("cluster: {node: dgx-a100}\nmodel: {hf_config: missing/config.json}\n",
               "bad.yaml:2:20", "model.hf_config", "not found");
  try {
    load_scenario(kData + "no_such_scenario.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()), kData +
                                         "no_such_scenario.yaml: scenario file not found; "
                                         "allowed: a path to a YAML file");
  }
}

TEST(ScenarioErrors, WorldSizeNotDivisibleByTp) {
  std::string text = base();
  text.replace(text.find("tp: 8"), 5, "tp: 3");
  expect_error(text, "bad.yaml:10:3", "parallel.tp",
               "tp = 3 does not divide the world size 16 (2 nodes × 8 GPUs); allowed: tp in 1, 2, "
               "4, 8, 16");
}

TEST(ScenarioErrors, WorldSizeNotDivisibleByTpTimesPp) {
  std::string text = base();
  text.replace(text.find("pp: 2"), 5, "pp: 3");
  expect_error(text, "bad.yaml:11:3", "parallel.pp", "tp · pp = 8 · 3 = 24 does not divide");
}

TEST(ScenarioErrors, StatedDpDisagrees) {
  expect_error(base("  dp: 2\n"), "bad.yaml:12:3", "parallel.dp",
               "dp = 2 disagrees with world / (tp · pp · cp) = 16 / (8 · 2 · 1) = 1; allowed: 1");
}

TEST(ScenarioErrors, GlobalBatchNotDivisible) {
  // tp 8, pp 1 -> dp 2; 63 is odd.
  std::string text = base();
  text.replace(text.find("pp: 2"), 5, "pp: 1");
  text.replace(text.find("global_batch: 64"), 16, "global_batch: 63");
  expect_error(text, "bad.yaml:7:3", "training.global_batch",
               "63 is not divisible by micro_batch · dp = 1 · 2 = 2");
}

const char* kTransformer = R"(cluster: {nodes: 2, node: dgx-a100}
model:
  num_layers: 30
  hidden_size: 1536
  num_heads: 12
  vocab_size: 50000
training: {global_batch: 64, seq_len: 1024}
parallel:
  tp: 4
  pp: 4
)";

TEST(ScenarioErrors, LayersNotDivisibleByPp) {
  expect_error(kTransformer, "bad.yaml:10:3", "parallel.pp",
               "num_layers = 30 is not divisible by pp = 4");
}

TEST(ScenarioErrors, TpDoesNotDivideHeads) {
  // tp comes from an override, so the message cites the flag.
  expect_error(kTransformer, "--set parallel.tp=8", "parallel.tp",
               "tp = 8 does not divide num_heads = 12; allowed: tp in 1, 2, 3, 4, 6, 12",
               {"parallel.pp=2", "parallel.tp=8"});
}

TEST(ScenarioErrors, InterleavedNeedsVirtualStages) {
  expect_error(base("  schedule: interleaved\n"), "bad.yaml:9:1", "parallel.virtual_stages",
               "schedule interleaved needs virtual_stages >= 2");
  expect_error(base("  virtual_stages: 2\n"), "bad.yaml:12:3", "parallel.virtual_stages",
               "needs schedule: interleaved; allowed: 1");
}

TEST(ScenarioErrors, ExpertParallelism) {
  expect_error(base("  ep: 2\n"), "bad.yaml:12:3", "parallel.ep", "ep = 2 does not divide dp = 1");
  // tp 1, pp 2 -> dp 8: ep divides dp, but GPT-3 is dense.
  std::string text = base("  ep: 2\n");
  text.replace(text.find("tp: 8"), 5, "tp: 1");
  expect_error(text, "bad.yaml:12:3", "parallel.ep", "needs a mixture-of-experts model");
}

TEST(ScenarioErrors, BadChoiceSuggests) {
  expect_error(base("  schedule: 1F1B\n"), "bad.yaml:12:13", "parallel.schedule",
               "unknown value '1F1B' (did you mean '1f1b'?); allowed: gpipe | 1f1b | interleaved");
  expect_error(base("  order: [tp, tp, dp, pp]\n"), "bad.yaml:12:15", "parallel.order[1]",
               "'tp' is listed twice");
}

TEST(ScenarioErrors, GradientsReduceInA16Or32BitType) {
  expect_error(
      "name: t\ncluster: {nodes: 2, node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 64, seq_len: 2048, grad_reduce_dtype: fp8}\n"
      "parallel: {tp: 8, pp: 2}\n",
      "bad.yaml:4:64", "training.grad_reduce_dtype", "reduced in fp32, bf16 or fp16, not fp8");
}

#ifdef CLUSTERSIM_HAVE_SIMGRID
TEST(ScenarioErrors, SimgridIsBuiltAndConfigured) {
  const Scenario sc = parse_scenario(
      base("", "simulation: {network_model: simgrid, simgrid: {model: CM02, latency_factor: 2}}\n"),
      "ok.yaml");
  EXPECT_EQ(sc.simulation.network_model, "simgrid");
  EXPECT_EQ(sc.simulation.simgrid.model, "CM02");
  EXPECT_EQ(sc.simulation.simgrid.latency_factor, 2.0);
  EXPECT_EQ(sc.simulation.simgrid.bandwidth_factor, 1.0);
  EXPECT_FALSE(sc.simulation.simgrid.crosstraffic);
}
#else
TEST(ScenarioErrors, SimgridIsNotBuilt) {
  expect_error(base("", "simulation: {network_model: simgrid}\n"), "bad.yaml:12:29",
               "simulation.network_model", "not built in this version");
}
#endif

TEST(ScenarioErrors, SimgridKeysAreCheckedWhereverSimgridIsBuilt) {
  expect_error(base("", "simulation: {simgrid: {model: NS3}}\n"), "bad.yaml:12:31",
               "simulation.simgrid.model", "allowed: LV08 | CM02 | IB");
  expect_error(base("", "simulation: {simgrid: {bandwidth_factor: 0}}\n"), "bad.yaml:12:42",
               "simulation.simgrid.bandwidth_factor", "allowed: 0 < value <= 100");
  expect_error(base("", "simulation: {simgrid: {latncy_factor: 2}}\n"), "bad.yaml:12:24",
               "simulation.simgrid.latncy_factor", "did you mean 'latency_factor'?");
}

TEST(ScenarioErrors, MissingRequiredKeys) {
  expect_error("cluster: {node: dgx-a100}\nmodel: gpt3-175b\ntraining: {seq_len: 8}\n",
               "bad.yaml:3:11", "training.global_batch", "required key missing");
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: {num_layers: 2, hidden_size: 64, num_heads: 2, "
      "vocab_size: 10}\ntraining:\n  global_batch: 8\n",
      "bad.yaml:4:3", "training.seq_len", "required key missing");
  expect_error("model: gpt3-175b\n", "bad.yaml:1:1", "cluster", "required key missing");
  // A misspelt required key is reported as the typo it is.
  expect_error("cluster: {node: dgx-a100}\nmodel: gpt3-175b\ntraining: {global_bach: 8}\n",
               "bad.yaml:3:12", "training.global_bach", "did you mean 'global_batch'?");
}

TEST(ScenarioErrors, YamlSyntaxErrorHasALine) {
  try {
    parse_scenario("cluster:\n  nodes: 2\nparallel: {tp: 8\n", "bad.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("bad.yaml:4:")) << e.what();  // end of input
    EXPECT_NE(std::string(e.what()).find("invalid YAML"), std::string::npos) << e.what();
  }
}

TEST(ScenarioErrors, DuplicateKey) {
  expect_error(base("  tp: 4\n"), "bad.yaml:12:3", "parallel.tp",
               "key given twice (first on line 10)");
}

TEST(ScenarioErrors, PrecisionTheGpuLacks) {
  // The A100 has no FP8 tensor cores (NVIDIA A100 datasheet).
  // Plan checks cite where the key is written: `precision` starts in column 29.
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 8, precision: fp8}\n",
      "bad.yaml:3:29", "training.precision", "has no fp8 peak");
}

TEST(ScenarioErrors, AttentionAndFusedKernelsAreCheckedChoices) {
  // `attention` starts in column 29, `fused_kernels`' value in column 44.
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 8, attention: fast}\n",
      "bad.yaml:3:40", "training.attention",
      "unknown value 'fast' (did you mean 'flash'?); allowed: standard | flash | flash1");
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 8, fused_kernels: maybe}\n",
      "bad.yaml:3:44", "training.fused_kernels", "allowed: true | false");
  expect_error(base(), "--set training.attention=paged", "training.attention", "allowed: standard",
               {"training.attention=paged"});
  expect_error(base(), "--set simulation.sm_sharing=sometimes", "simulation.sm_sharing",
               "allowed: true | false", {"simulation.sm_sharing=sometimes"});
  // `loss_chunks`' value starts in column 42.
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 8, loss_chunks: 0}\n",
      "bad.yaml:3:42", "training.loss_chunks", "allowed: integers from 1 to 4096");
}

TEST(ScenarioErrors, FlashAttentionHasNoFp32Kernel) {
  expect_error(
      "cluster: {node: dgx-a100}\nmodel: gpt3-175b\n"
      "training: {global_batch: 8, precision: fp32, attention: flash}\n",
      "bad.yaml:3:46", "training.attention",
      "flash attention has no fp32 kernel (FlashAttention runs fp16, bf16 and fp8); allowed: "
      "standard");
}

TEST(ScenarioErrors, GpuWithoutTheFlashAttentionFigureIsNamed) {
  // A preset's figures with the fused-attention efficiency taken away: the kernel model cannot
  // cost a flash attention kernel on it. The error names the GPU and the figure.
  Scenario ok = parse_scenario(base(), "ok.yaml");
  GpuSpec gpu = ok.cluster.gpu;
  gpu.attention_bwd_efficiency = 0;
  ok.cluster.gpu = gpu;
  ok.training.attention_given = true;
  ok.training.attention = Attention::flash;
  try {
    detail::validate(ok);
    ADD_FAILURE() << "accepted a flash attention kernel without its figure";
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("training.attention: GPU A100-SXM4-80GB has no "
                           "attention_bwd_efficiency figure"),
              std::string::npos)
        << message;
  }
}

TEST(ScenarioErrors, LayerListNeedsUnits) {
  expect_error(
      "cluster: {node: dgx-a100}\nmodel:\n  layers:\n"
      "    - {name: a, params: 1e6, forward_flops: 1e9}\n"
      "    - {name: b, params: 1e6, forward_flops: 1e9, activation_bytes: 4096}\n"
      "training: {global_batch: 8}\n",
      "bad.yaml:5:68", "model.layers[1].activation_bytes", "a unit is required");
}

TEST(ScenarioErrors, SetOverrideErrorsCiteTheFlag) {
  expect_error(base(), "--set parallel.tp=abc", "parallel.tp", "'abc' is not an integer",
               {"parallel.tp=abc"});
  expect_error(base(), "--set parallel.tpp=4", "parallel.tpp", "did you mean 'tp'?",
               {"parallel.tpp=4"});
  expect_error(base(), "--set cluster.network.nic_bandwidth=10", "cluster.network.nic_bandwidth",
               "a unit is required", {"cluster.network.nic_bandwidth=10"});
  // The plan check blames the overridden key, so it cites the flag too.
  expect_error(base(), "--set parallel.pp=3", "parallel.pp", "does not divide", {"parallel.pp=3"});
  try {
    parse_scenario(base(), "bad.yaml", {"parallel.tp"});
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "--set parallel.tp: expected KEY.PATH=VALUE, e.g. --set parallel.tp=4");
  }
}

}  // namespace
}  // namespace clustersim::models
