// Loading scenario files (DESIGN.md "Scenario file"): the design's example, explicit clusters,
// presets with explicit overrides, --set overrides and determinism. Malformed scenarios are in
// test_scenario_errors.cpp. Expected numbers are the written values converted by hand.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kData = CLUSTERSIM_TEST_DATA "/scenarios/";

TEST(Scenario, DesignExampleParsesToItsNumbers) {
  const Scenario s = load_scenario(kData + "gpt3_design_example.yaml");
  EXPECT_EQ(s.name, "gpt3-175b-1024xA100");
  EXPECT_EQ(s.file, kData + "gpt3_design_example.yaml");
  EXPECT_EQ(s.cluster.nodes, 128);
  EXPECT_EQ(s.cluster.topology.nodes, 128);
  EXPECT_EQ(s.cluster.node_preset, "dgx-a100");
  EXPECT_EQ(s.cluster.topology.node.gpus, 8);  // a DGX A100 holds 8 GPUs
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::fp16)], 312e12);  // A100
  EXPECT_EQ(s.cluster.topology.fabric.kind, engine::FabricKind::fat_tree);
  // 200Gb/s = 200e9 bits/s / 8 = 25e9 B/s.
  EXPECT_DOUBLE_EQ(s.cluster.topology.node.nic_bandwidth.bytes_per_second(), 25e9);
  EXPECT_EQ(s.cluster.topology.node.nics, 8);
  EXPECT_EQ(s.cluster.topology.fabric.latency.ps(), 1'000'000);  // 1us = 1e6 ps
  EXPECT_DOUBLE_EQ(s.cluster.topology.fabric.oversubscription, 1.0);
  EXPECT_EQ(s.model.name, "gpt3-175b");
  const auto& t = std::get<TransformerSpec>(s.model.body);
  EXPECT_EQ(t.num_layers, 96);  // GPT-3 175B (Brown et al. 2020, table 2.1)
  EXPECT_EQ(t.hidden_size, 12288);
  EXPECT_EQ(s.training.global_batch, 1536);
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.seq_len, 2048);
  EXPECT_EQ(s.training.precision, Precision::fp16);
  EXPECT_EQ(s.training.recompute, Recompute::full);
  EXPECT_EQ(s.training.optimizer, Optimizer::adam);
  EXPECT_EQ(s.parallel.tp, 8);
  EXPECT_EQ(s.parallel.pp, 16);
  EXPECT_EQ(s.parallel.ep, 1);
  EXPECT_EQ(s.parallel.dp, 8);  // 1024 GPUs / (8 · 16)
  EXPECT_FALSE(s.parallel.sequence_parallel);
  EXPECT_EQ(s.parallel.schedule, PipelineSchedule::one_f_one_b);
  EXPECT_EQ(s.parallel.virtual_stages, 1);
  EXPECT_EQ(s.parallel.data_parallel, DataParallel::ddp);
  EXPECT_DOUBLE_EQ(s.parallel.bucket_bytes, 26214400.0);  // 25 MiB = 25 · 1024²
  EXPECT_TRUE(s.parallel.overlap);
  EXPECT_EQ(s.world_size(), 1024);       // 128 nodes × 8
  EXPECT_EQ(s.num_microbatches(), 192);  // 1536 / (1 · 8)
  EXPECT_EQ(s.simulation.network_model, "flow");
  EXPECT_EQ(s.simulation.iterations, 1);
  EXPECT_EQ(s.simulation.calibration, kData + "calibration.json");  // next to the scenario
  EXPECT_EQ(s.simulation.algorithms, engine::no_overrides());
  // Locations: `tp: 8` is on line 10, column 3 of the file.
  const SourceLocation& tp = s.locations.at("parallel.tp");
  EXPECT_EQ(tp.file, kData + "gpt3_design_example.yaml");
  EXPECT_EQ(tp.line, 10);
  EXPECT_EQ(tp.column, 3);
  EXPECT_EQ(s.locations.at("cluster.network.latency").line, 6);
}

TEST(Scenario, ExplicitPcieClusterAndLayerList) {
  const Scenario s = load_scenario(kData + "explicit_pcie.yaml");
  const engine::NodeTopologySpec& node = s.cluster.topology.node;
  EXPECT_TRUE(s.cluster.node_preset.empty());
  EXPECT_EQ(s.cluster.gpu.name, "my-gpu");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::fp32)], 19.5e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::bf16)], 312e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::fp8)], 0.0);  // unlisted
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_bytes, 85899345920.0);  // 80 GiB = 80 · 1024³
  EXPECT_EQ(node.gpus, 4);
  EXPECT_EQ(node.fabric, engine::IntraNodeFabric::pcie);
  // PCIe 4.0 x16: 16 GT/s · 16 lanes · 128/130 / 8 = 31.5 GB/s raw, ~25 GB/s effective after
  // packet overhead (the figure nccl-tests and cudaMemcpy reach; docs/presets.md).
  EXPECT_DOUBLE_EQ(node.pcie_bandwidth.bytes_per_second(), 25e9);
  EXPECT_EQ(node.gpus_per_pcie_switch, 2);
  EXPECT_TRUE(node.nvlink_bridges);
  EXPECT_DOUBLE_EQ(node.nvlink_bandwidth.bytes_per_second(), 56.25e9);
  EXPECT_EQ(s.cluster.topology.fabric.kind, engine::FabricKind::single_switch);
  EXPECT_DOUBLE_EQ(node.nic_bandwidth.bytes_per_second(), 12.5e9);  // 100e9 / 8
  EXPECT_EQ(node.nics, 2);
  EXPECT_EQ(s.cluster.topology.fabric.latency.ps(), 2'000'000);

  const auto& layers = std::get<std::vector<LayerSpec>>(s.model.body);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(s.model.name, "cnn");
  EXPECT_EQ(layers[0].name, "stem");
  EXPECT_DOUBLE_EQ(layers[0].params, 9408.0);
  EXPECT_DOUBLE_EQ(layers[0].forward_flops, 1.18e8);
  EXPECT_LT(layers[0].backward_flops, 0.0);  // unstated: twice the forward, decided downstream
  EXPECT_DOUBLE_EQ(layers[0].activation_bytes, 1.6e6);
  EXPECT_EQ(layers[0].repeat, 1);
  EXPECT_DOUBLE_EQ(layers[1].backward_flops, 5e8);
  EXPECT_DOUBLE_EQ(layers[1].activation_bytes, 524288.0);  // 512 KiB
  EXPECT_EQ(layers[1].repeat, 16);

  EXPECT_EQ(s.training.micro_batch, 8);
  EXPECT_EQ(s.training.optimizer, Optimizer::sgd);
  EXPECT_EQ(s.parallel.dp, 8);         // 16 GPUs / (1 · 2)
  EXPECT_EQ(s.num_microbatches(), 4);  // 256 / (8 · 8)
  EXPECT_EQ(s.parallel.schedule, PipelineSchedule::gpipe);
  EXPECT_EQ(s.parallel.data_parallel, DataParallel::zero2);
  EXPECT_DOUBLE_EQ(s.parallel.bucket_bytes, 52428800.0);  // 50 MiB
  EXPECT_FALSE(s.parallel.overlap);
  EXPECT_EQ(s.parallel.order, (std::vector<std::string>{"dp", "tp", "ep", "pp"}));
  EXPECT_EQ(s.simulation.network_model, "analytical");
  EXPECT_EQ(s.simulation.iterations, 3);
  const auto all_reduce = static_cast<std::size_t>(engine::CollectiveType::all_reduce);
  const auto all_to_all = static_cast<std::size_t>(engine::CollectiveType::all_to_all);
  const auto all_gather = static_cast<std::size_t>(engine::CollectiveType::all_gather);
  EXPECT_EQ(s.simulation.algorithms[all_reduce], engine::Algorithm::tree);
  EXPECT_EQ(s.simulation.algorithms[all_to_all], engine::Algorithm::direct);
  EXPECT_EQ(s.simulation.algorithms[all_gather], engine::Algorithm::automatic);
}

// A transformer written out, with every DESIGN.md key: Mixtral 8x7B's published shape
// (hidden 4096, 32 layers, 32 heads, 8 KV heads, FFN 14336, vocab 32000, 8 experts, top-2).
const char* kMixtral = R"(
cluster: {nodes: 2, node: dgx-h100}
model:
  name: mixtral
  num_layers: 32
  hidden_size: 4096
  num_heads: 32
  num_kv_heads: 8
  ffn_hidden_size: 14336
  vocab_size: 32000
  activation: swiglu
  norm: rmsnorm
  bias: false
  learned_positions: false
  tied_embeddings: false
  moe: {num_experts: 8, top_k: 2, every: 1, expert_ffn_hidden_size: 14336, capacity_factor: 1.25}
training: {global_batch: 64, seq_len: 4096, precision: bf16, recompute: selective}
parallel: {tp: 4, pp: 2, ep: 2, sequence_parallel: true, data_parallel: zero1}
)";

TEST(Scenario, TransformerWithMoe) {
  const Scenario s = parse_scenario(kMixtral, "mixtral.yaml");
  const auto& t = std::get<TransformerSpec>(s.model.body);
  EXPECT_EQ(s.name, "mixtral");  // no name: the file's stem
  EXPECT_EQ(s.model.name, "mixtral");
  EXPECT_EQ(t.num_layers, 32);
  EXPECT_EQ(t.num_kv_heads, 8);
  EXPECT_EQ(t.ffn_hidden_size, 14336);
  EXPECT_EQ(t.activation, Activation::swiglu);
  EXPECT_EQ(t.norm, Norm::rmsnorm);
  EXPECT_FALSE(t.bias);
  EXPECT_FALSE(t.learned_positions);
  ASSERT_TRUE(t.moe.has_value());
  EXPECT_EQ(t.moe->num_experts, 8);
  EXPECT_EQ(t.moe->top_k, 2);
  EXPECT_DOUBLE_EQ(t.moe->capacity_factor, 1.25);
  EXPECT_EQ(s.parallel.dp, 2);  // 16 GPUs / (4 · 2); ep = 2 divides it
  EXPECT_EQ(s.parallel.ep, 2);
  EXPECT_TRUE(s.parallel.sequence_parallel);
  EXPECT_EQ(s.training.recompute, Recompute::selective);
  EXPECT_EQ(s.parallel.data_parallel, DataParallel::zero1);
}

TEST(Scenario, DefaultsWhenKeysAreLeftOut) {
  const Scenario s = parse_scenario(R"(
cluster: {node: dgx-a100}
model: gpt3-175b
training: {global_batch: 8}
)",
                                    "minimal.yaml");
  EXPECT_EQ(s.cluster.nodes, 1);
  EXPECT_EQ(s.training.seq_len, 2048);  // GPT-3's context length, the preset's default
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.precision, Precision::bf16);
  EXPECT_EQ(s.parallel.tp, 1);
  EXPECT_EQ(s.parallel.dp, 8);  // all 8 GPUs of one node
  EXPECT_EQ(s.parallel.order, (std::vector<std::string>{"tp", "ep", "dp", "pp"}));
  EXPECT_EQ(s.simulation.network_model, "flow");
  EXPECT_DOUBLE_EQ(s.parallel.bucket_bytes, 25.0 * 1024 * 1024);
}

TEST(Scenario, ExplicitKeysOverridePresetFields) {
  const Scenario s = parse_scenario(R"(
cluster:
  nodes: 2
  node: dgx-a100
  gpus_per_node: 4
  gpu: {memory: 40GB}
  network: {nic_bandwidth: 400Gb/s, topology: rail-optimized}
model: {preset: gpt3-175b, num_layers: 8}
training: {global_batch: 16}
parallel: {tp: 4, pp: 2}
)",
                                    "override.yaml");
  EXPECT_EQ(s.cluster.node_preset, "dgx-a100");
  EXPECT_EQ(s.cluster.topology.node.gpus, 4);
  // The preset's 8 NICs follow the smaller node: one per GPU unless stated.
  EXPECT_EQ(s.cluster.topology.node.nics, 4);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_bytes, 40e9);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::bf16)], 312e12);  // kept
  EXPECT_DOUBLE_EQ(s.cluster.topology.node.nic_bandwidth.bytes_per_second(), 50e9);  // 400e9 / 8
  EXPECT_EQ(s.cluster.topology.fabric.kind, engine::FabricKind::rail_optimized);
  const auto& t = std::get<TransformerSpec>(s.model.body);
  EXPECT_EQ(t.num_layers, 8);
  EXPECT_EQ(t.hidden_size, 12288);  // from the preset
  EXPECT_EQ(s.model.name, "gpt3-175b");
  EXPECT_EQ(s.parallel.dp, 1);  // 8 GPUs / (4 · 2)
}

const char* kBase = R"(cluster:
  nodes: 2
  node: dgx-a100
model: gpt3-175b
training:
  global_batch: 64
  seq_len: 2048
parallel:
  tp: 8
  pp: 2
)";

TEST(Scenario, SetOverridesReplaceAndCreateKeys) {
  const Scenario s = parse_scenario(
      kBase, "base.yaml",
      {"parallel.tp=4", "parallel.order=[dp, tp, ep, pp]", "cluster.network.latency=2us",
       "training.micro_batch=2", "simulation.algorithms.all_reduce=ring"});
  EXPECT_EQ(s.parallel.tp, 4);
  EXPECT_EQ(s.parallel.dp, 2);          // 16 / (4 · 2)
  EXPECT_EQ(s.num_microbatches(), 16);  // 64 / (2 · 2)
  EXPECT_EQ(s.parallel.order, (std::vector<std::string>{"dp", "tp", "ep", "pp"}));
  EXPECT_EQ(s.cluster.topology.fabric.latency.ps(), 2'000'000);
  EXPECT_EQ(s.simulation.algorithms[static_cast<std::size_t>(engine::CollectiveType::all_reduce)],
            engine::Algorithm::ring);
  // Overridden keys cite the flag; untouched keys keep their line.
  EXPECT_EQ(s.locations.at("parallel.tp").file, "--set parallel.tp=4");
  EXPECT_EQ(s.locations.at("parallel.tp").line, 0);
  EXPECT_EQ(s.locations.at("parallel.pp").file, "base.yaml");
  EXPECT_EQ(s.locations.at("parallel.pp").line, 10);
}

TEST(Scenario, SetOverrideWithAMapValue) {
  const Scenario s = parse_scenario(kBase, "base.yaml",
                                    {"cluster.gpu={preset: H100-SXM5-80GB, memory: 40GB}",
                                     "parallel.schedule=interleaved", "parallel.virtual_stages=2"});
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_bytes, 40e9);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops[static_cast<int>(Precision::bf16)], 989e12);  // H100
  // Interleaved: 96 layers over pp 2 · 2 chunks, 64 micro-batches a multiple of pp.
  EXPECT_EQ(s.parallel.schedule, PipelineSchedule::interleaved);
  EXPECT_EQ(s.parallel.virtual_stages, 2);
}

TEST(Scenario, SetOverrideTurnsAPresetIntoAMap) {
  const Scenario s = parse_scenario(kBase, "base.yaml", {"model.num_layers=4"});
  EXPECT_EQ(std::get<TransformerSpec>(s.model.body).num_layers, 4);
  EXPECT_EQ(std::get<TransformerSpec>(s.model.body).hidden_size, 12288);
}

TEST(Scenario, FailCitesTheKeyOrItsSection) {
  const Scenario s = parse_scenario(kBase, "base.yaml");
  try {
    s.fail("parallel.pp", "does not fit in memory");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "base.yaml:10:3: parallel.pp: does not fit in memory");
  }
  try {  // never written: blamed on the `parallel:` line
    s.fail("parallel.dp", "too large");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "base.yaml:8:1: parallel.dp: too large");
  }
  try {
    s.fail("simulation.iterations", "x");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "base.yaml: simulation.iterations: x");
  }
}

TEST(Scenario, HuggingFaceConfigRelativeToTheScenario) {
  const Scenario s = load_scenario(kData + "hf_model.yaml");
  const auto& t = std::get<TransformerSpec>(s.model.body);
  // The numbers written in tests/data/scenarios/tiny_llama_config.json.
  EXPECT_EQ(t.num_layers, 6);
  EXPECT_EQ(t.hidden_size, 512);
  EXPECT_EQ(t.num_heads, 8);
  EXPECT_EQ(t.num_kv_heads, 4);
  EXPECT_EQ(t.ffn_hidden_size, 1376);
  EXPECT_EQ(t.vocab_size, 32000);
  EXPECT_EQ(s.parallel.dp, 4);  // 8 GPUs / tp 2
}

// Same text twice: every field the same, keys located the same.
TEST(Scenario, Deterministic) {
  const Scenario a = parse_scenario(kMixtral, "m.yaml", {"parallel.tp=2"});
  const Scenario b = parse_scenario(kMixtral, "m.yaml", {"parallel.tp=2"});
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.cluster.gpu.peak_flops, b.cluster.gpu.peak_flops);
  EXPECT_EQ(a.cluster.topology.node.nic_bandwidth, b.cluster.topology.node.nic_bandwidth);
  EXPECT_EQ(a.cluster.topology.fabric.latency, b.cluster.topology.fabric.latency);
  const auto& ta = std::get<TransformerSpec>(a.model.body);
  const auto& tb = std::get<TransformerSpec>(b.model.body);
  EXPECT_EQ(ta.num_layers, tb.num_layers);
  EXPECT_EQ(ta.moe->num_experts, tb.moe->num_experts);
  EXPECT_EQ(a.training.global_batch, b.training.global_batch);
  EXPECT_EQ(a.parallel.tp, b.parallel.tp);
  EXPECT_EQ(a.parallel.dp, b.parallel.dp);
  EXPECT_EQ(a.parallel.order, b.parallel.order);
  EXPECT_EQ(a.simulation.algorithms, b.simulation.algorithms);
  ASSERT_EQ(a.locations.size(), b.locations.size());
  for (auto ia = a.locations.begin(), ib = b.locations.begin(); ia != a.locations.end();
       ++ia, ++ib) {
    EXPECT_EQ(ia->first, ib->first);
    EXPECT_EQ(ia->second.file, ib->second.file);
    EXPECT_EQ(ia->second.line, ib->second.line);
    EXPECT_EQ(ia->second.column, ib->second.column);
  }
}

}  // namespace
}  // namespace clustersim::models
