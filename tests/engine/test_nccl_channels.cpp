// Issue 17 item 6: channels, node-aware trees and NVLS against closed forms.
#include <gtest/gtest.h>

#include <set>

#include "engine/network/collectives.hpp"
#include "engine/network/nccl_tuning.hpp"
#include "engine/network/network_model.hpp"
#include "engine/topology_builders.hpp"
#include "tests/engine/run_flow.hpp"

namespace clustersim::engine {
namespace {

constexpr double kNicGBps = 25.0;  // 200 Gb/s

ClusterTopologySpec dgx(int nodes, double nvlink_gbps, int arch = 80) {
  ClusterTopologySpec spec;
  spec.nodes = nodes;
  spec.node.gpus = 8;
  spec.node.nics = 8;
  spec.node.nvlink_bandwidth = Bandwidth::gigabytes_per_second(nvlink_gbps);
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(0.4 * nvlink_gbps);  // > B, < NVLink
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(kNicGBps);
  spec.node.gpu_arch = arch;
  spec.node.nvls = arch >= 90;
  spec.fabric.kind = FabricKind::single_switch;
  return spec;
}

double run_one(const Topology& t, const TransferPlan& plan, double bytes,
               std::vector<double>* link_bytes = nullptr) {
  return run_flow_once(t, plan, bytes, link_bytes);
}

TEST(NcclChannels, RingAllReduceAcrossNodesUsesEveryNicAtKTimesB) {
  // N = 2 nodes of g = 8 GPUs and k = 8 NICs of B: 2(Ng-1)/(Ng)·S / min(k·B, NVLink share).
  // NVLink 1 TB/s: its share g/(g-1)·1000 GB/s is far above k·B = 200 GB/s.
  const Topology t = build_cluster_topology(dgx(2, 1000));
  const auto m = all_gpus(t);
  EXPECT_EQ(collective_channels(m, t), 16);  // 2 × the 8 NICs, as NCCL duplicates channels
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t);
  EXPECT_EQ(p.channels, 16);
  const double s = 4e9;
  const double n = 16;
  std::vector<double> bytes;
  const double got = run_one(t, p, s, &bytes) - p.phases[0].latency.seconds();
  const double want = 2.0 * (n - 1) / n * s / (8 * kNicGBps * 1e9);
  EXPECT_NEAR(got, want, 0.01 * want);
  // Every NIC's uplink carries the same share: 2(n-1)/n·S/k.
  int nic_links = 0;
  for (LinkId l = 0; l < t.num_links(); ++l) {
    const LinkInfo& info = t.link(l);
    if (t.vertex(info.src).kind != VertexKind::nic || info.kind != LinkKind::ib) continue;
    ++nic_links;
    EXPECT_NEAR(bytes[l], 2.0 * (n - 1) / n * s / 8, 1e-6 * s) << info.name;
  }
  EXPECT_EQ(nic_links, 16);
  // Flows are merged per GPU pair: not 16 channels × 16 edges.
  EXPECT_LE(p.phases[0].flows.size(), 16u + 16u);
}

TEST(NcclChannels, RingInterNodeHopsStayOnTheirRail) {
  const Topology t = build_cluster_topology(dgx(4, 1000));
  const TransferPlan p =
      plan_collective(CollectiveType::all_gather, Algorithm::ring, all_gpus(t), 0, t);
  int cross_rail = 0;
  for (const FlowSpec& f : p.phases[0].flows) {
    if (t.node_of(f.src) == t.node_of(f.dst)) continue;
    if (f.src % 8 != f.dst % 8) ++cross_rail;
  }
  // Only the hop closing each channel's ring (last node -> first) may change rails.
  EXPECT_LE(cross_rail, 16);
}

TEST(NcclChannels, NvlinkShareBoundsTheRingWhenNicsAreFaster) {
  // NVLink 100 GB/s per GPU: the ring inside a node crosses g-1 of g NVLink edges per channel,
  // so the NVLink share is g/(g-1)·100 GB/s < k·B = 200 GB/s.
  const Topology t = build_cluster_topology(dgx(2, 100));
  const auto m = all_gpus(t);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t);
  const double s = 4e9;
  const double got = run_one(t, p, s) - p.phases[0].latency.seconds();
  const double want = 2.0 * 15 / 16 * s / (8.0 / 7.0 * 100e9);
  EXPECT_NEAR(got, want, 0.02 * want);
}

TEST(NcclChannels, PcieServerWithOneNicSharesItBetweenChannels) {
  ClusterTopologySpec spec;
  spec.nodes = 2;
  spec.node.fabric = IntraNodeFabric::pcie;
  spec.node.gpus = 4;
  spec.node.gpus_per_pcie_switch = 0;
  spec.node.cpus = 1;
  spec.node.nics = 1;
  spec.node.pcie_bandwidth = Bandwidth::gigabytes_per_second(1000);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(kNicGBps);
  spec.fabric.kind = FabricKind::single_switch;
  spec.channels = 4;
  const Topology t = build_cluster_topology(spec);
  const auto m = all_gpus(t);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t);
  EXPECT_EQ(p.channels, 4);
  const double s = 1e9;
  const double got = run_one(t, p, s) - p.phases[0].latency.seconds();
  const double want = 2.0 * 7 / 8 * s / (kNicGBps * 1e9);  // all channels through one NIC
  EXPECT_NEAR(got, want, 0.01 * want);
}

TEST(NcclChannels, TreeIsAChainInsideNodesAndADoubleBinaryTreeAcross) {
  const Topology t = build_cluster_topology(dgx(4, 1000));
  const auto m = all_gpus(t);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::tree, m, 0, t);
  for (const FlowSpec& f : p.phases[0].flows) {
    if (t.node_of(f.src) == t.node_of(f.dst)) continue;
    EXPECT_EQ(f.src % 8, f.dst % 8);  // tree edges between nodes join the same local index
  }
  // Latency: base 8.4 + 2·((g-1)·4.0 NVLink hops + log2(4)·14 network hops), Simple.
  EXPECT_NEAR(p.phases[0].latency.seconds(), (8.4 + 2 * (7 * 4.0 + 2 * 14.0)) * 1e-6, 1e-9);
  // Bandwidth: the same per-NIC bytes as the ring (2/k of S per channel pair), capped at 0.92 of
  // the link rate (NCCL's tree factor).
  // The pipeline fill (docs/network.md "Pipeline fill") comes on top: 2·(7 + 2) − 1 = 17 stages
  // after the first, 16 channels, Simple chunks of 4 MiB / 8 = 512 KiB.
  const double s = 4e9;
  const Pipeline& pl = p.phases[0].pipeline;
  EXPECT_EQ(pl.fill_steps, 17.0);
  EXPECT_EQ(pl.pipelines, 16.0);
  EXPECT_EQ(pl.chunk(s), 524288.0);
  const double got = run_one(t, p, s) - p.phases[0].latency_for(s).seconds();
  EXPECT_GT(got, 0.0);
  EXPECT_NEAR(p.phases[0].rate_cap * got / s, 1.0, 0.02);
}

// NCCL's chunk sizes by message size (calcCollChunking, NCCL v2.30.7), worked by hand.
TEST(NcclPipeline, ChunksShrinkAsNcclShrinksThem) {
  // Tree LL128 on 8 nodes of 8, 16 channels: chunk 614400 / 16 · 15 = 576000; depth
  // 1 + 3 + 0.8 = 4.8. At 16 MiB, 1 MiB per channel: halve while < 4.8·64/8 = 38.4 chunks and
  // above 131072: 288000, 144000, 72000; then 14 chunks >= 4.8·16/8 = 9.6: 72000 stays.
  const nccl::PipelineShape tree8{8, 8, 16.0, 90};
  const Pipeline t = nccl::pipeline_of(nccl::Row::tree, Protocol::ll128, tree8);
  EXPECT_EQ(t.fill_steps, 2.0 * 3 - 1);  // LL128 holds a chunk only at the 2·log2(8) network hops
  EXPECT_EQ(t.chunk(16.0 * 1024 * 1024), 72000.0);
  // At 256 MiB (16 MiB per channel): 29 chunks of 576000 < 38.4, halve once: 58 of 288000.
  EXPECT_EQ(t.chunk(256.0 * 1024 * 1024), 288000.0);
  // NVLSTree on 2 H100 nodes: 16 NVLS channels × 8 heads = 128 pipelines, 128 KiB chunks; 64 KiB
  // below 4 · 128 · 128 KiB = 64 MiB, 32 KiB below 128 · 64 KiB = 8 MiB. Fill: 2·log2(2) hops.
  const nccl::PipelineShape nv2{2, 8, 16.0, 90};
  const Pipeline n = nccl::pipeline_of(nccl::Row::nvls_tree, Protocol::simple, nv2);
  EXPECT_EQ(n.pipelines, 128.0);
  EXPECT_EQ(n.fill_steps, 2.0);
  EXPECT_EQ(n.chunk(1024.0 * 1024 * 1024), 131072.0);
  EXPECT_EQ(n.chunk(32.0 * 1024 * 1024), 65536.0);
  EXPECT_EQ(n.chunk(4.0 * 1024 * 1024), 32768.0);
  // A pipeline's chunk never exceeds its share: 1 MiB / 128 = 8 KiB.
  EXPECT_EQ(n.chunk(1024.0 * 1024), 8192.0);
  // From 4 nodes the NVLS tree's largest chunk is 64 KiB (nvlsTreeMaxChunkSize).
  const nccl::PipelineShape nv8{8, 8, 16.0, 90};
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::nvls_tree, Protocol::simple, nv8).chunk(8e9), 65536.0);
  // A ring has no fill: every link is busy from the first step.
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::ring, Protocol::simple, tree8).fill(1e9), Time::zero());
  // fill = steps · pipelines · chunk · seconds per byte: 2 · 128 · 131072 B / 400 GB/s.
  Pipeline f = n;
  f.seconds_per_byte = 1.0 / 400e9;
  EXPECT_NEAR(f.fill(1e9).seconds(), 2.0 * 128 * 131072 / 400e9, 1e-12);
}

TEST(NcclChannels, NvlsOnOneH100NodeMatchesItsFormula) {
  // NVLS: each link carries S·(g+1)/g; NCCL's NVLS efficiency 0.85 on Hopper:
  // time = 25 us + S / (0.85 · B · g/(g+1)); busbw = 2(g-1)/g · S / time.
  const Topology t = build_cluster_topology(dgx(1, 360, 90));
  const auto m = all_gpus(t);
  const CollectiveChoice c = choose_collective(CollectiveType::all_reduce, 8e9, m, t);
  EXPECT_EQ(c.algorithm, Algorithm::nvls);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::nvls, m, 0, t, Protocol::simple);
  EXPECT_NEAR(p.phases[0].latency.seconds(), 25e-6, 1e-9);
  const double s = 8e9;
  const double got = run_one(t, p, s);
  const double want = 25e-6 + s / (0.85 * 360e9 * 8.0 / 9.0);
  EXPECT_NEAR(got, want, 0.01 * want);
  const double busbw = 2.0 * 7 / 8 * s / got / 1e9;
  EXPECT_NEAR(busbw, 476, 5);  // published: ~480 GB/s on 8 × H100 (validation/collectives)
}

TEST(NcclChannels, NvlsOnOneNodeFillsThreeStagesOfItsChunk) {
  // One-node NVLS moves each chunk through three buffered stages (scatter into the NVLS buffers,
  // reduce in the switch and multicast, gather into the output: NCCL's all_reduce.h), so the
  // last chunk has two stages left when the bandwidth term ends. 8 × H100, 360 GB/s NVLink,
  // 256 MiB: 16 channels × 8 heads = 128 pipelines; chunk 64 KiB (256 MiB < 64 · 128 · 128 KiB,
  // >= 8 · 128 · 64 KiB). A chunk crosses each stage at the NVLS rate, not the raw link rate: the
  // NVLS warps move it through the switch at nvlsEfficiency (0.85) of the link's S·9/8 per payload
  // byte, so a stage of 128 chunks takes 128 · 65536 / (0.85 · 360 GB/s · 8/9) = 30.8 us (26.2 us
  // at the raw link rate). time = 25 us + 2 · 30.8 us + S / (0.85 · 360 · 8/9).
  const Topology t = build_cluster_topology(dgx(1, 360, 90));
  const auto m = all_gpus(t);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::nvls, m, 0, t, Protocol::simple);
  const double s = 256.0 * 1024 * 1024;
  EXPECT_EQ(p.phases[0].pipeline.fill_steps, 2.0);
  EXPECT_EQ(p.phases[0].pipeline.chunk(s), 65536.0);
  const double nvls_rate = 0.85 * 360e9 * 8.0 / 9.0;
  const double stage = 128.0 * 65536 / nvls_rate;
  const double want = 25e-6 + 2.0 * stage + s / nvls_rate;
  EXPECT_NEAR(run_one(t, p, s), want, 1e-4 * want);  // stages at the link rate: 0.9 % off
}

TEST(NcclChannels, NvlsTreeStagesCrossAtTheNvlsRate) {
  // Two nodes whose NICs (100 GB/s) leave NVLink binding: NVLSTree runs at R = 0.93 · 0.85 ·
  // 360 GB/s · 8/9 = 253.0 GB/s of payload (kNvlsTreeNvlinkShare × nvlsEfficiency × the link's
  // S·9/8), and a chunk crosses each of its 2·log2 2 = 2 network stages at R too. 64 MiB: 16
  // channels × 8 heads = 128 pipelines; chunk 128 KiB (64 MiB is not < 4 · 128 · 128 KiB, NCCL's
  // calcCollChunking for NVLS_TREE), so a stage takes 128 · 131072 / R = 66.3 us.
  // latency = 25 us (NVLink hop) + 2 · log2 2 · 20.9 us (NVLSTree network hop) = 66.8 us.
  // time = 66.8 + 2 · 66.3 + S / R = 66.8 + 132.6 + 265.3 = 464.7 us (published, nccl-tests #309,
  // 2 × 8 H100: 466.1 us); the stages at the raw link rate (360 · 8/9 GB/s) would give 436.9 us.
  auto spec = dgx(2, 360, 90);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(100);
  const Topology t = build_cluster_topology(spec);
  const TransferPlan p = plan_collective(CollectiveType::all_reduce, Algorithm::nvls, all_gpus(t),
                                         0, t, Protocol::simple);
  const double s = 64.0 * 1024 * 1024;
  const double rate = 0.93 * 0.85 * 360e9 * 8.0 / 9.0;
  EXPECT_NEAR(p.phases[0].latency.seconds(), 66.8e-6, 1e-9);
  EXPECT_EQ(p.phases[0].pipeline.fill_steps, 2.0);
  EXPECT_EQ(p.phases[0].pipeline.chunk(s), 131072.0);
  const double want = 66.8e-6 + 2.0 * 128.0 * 131072 / rate + s / rate;
  EXPECT_NEAR(run_one(t, p, s), want, 1e-3 * want);  // stages at the link rate: 6 % off
}

TEST(NcclChannels, NvlsTreeOnTwoH100NodesRunsBelowTheTunersRate) {
  // Two nodes, NICs fast enough (100 GB/s) that NVLink binds: NVLSTree runs at
  // kNvlsTreeNvlinkShare (0.93) of one-node NVLS's rate, time = lat + S / (0.93 · 0.85 · B ·
  // g/(g+1)), while the tuner, as NCCL's, still rates it at NVLS's 0.85 · B · g/(g+1).
  auto spec = dgx(2, 360, 90);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(100);
  const Topology t = build_cluster_topology(spec);
  const auto m = all_gpus(t);
  const double s = 8e9;
  const CollectiveChoice c = choose_collective(CollectiveType::all_reduce, s, m, t);
  EXPECT_EQ(c.algorithm, Algorithm::nvls);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::nvls, m, 0, t, Protocol::simple);
  const double lat = p.phases[0].latency.seconds();
  const double nvls_rate = 0.85 * 360e9 * 8.0 / 9.0;
  EXPECT_NEAR(c.estimate_s, lat + s / nvls_rate, 0.001 * c.estimate_s);
  const double got = run_one(t, p, s);
  const double want = lat + s / (0.93 * nvls_rate);
  EXPECT_NEAR(got, want, 0.01 * want);
  // busbw 2(n-1)/n · S / time at n = 16: 1.875 · 0.93 · 272 = 474 GB/s, one node's figure
  // (published: H100 466-469 on two nodes against 474 on one, validation/collectives).
  EXPECT_NEAR(2.0 * 15 / 16 * s / got / 1e9, 474, 5);
}

TEST(NcclChannels, MinCtasIsAFloorOnEveryCollectivesChannelsNvlsIncluded) {
  // NCCL clamps its ring/tree channels (setupChannels) and its NVLS channels (nvls.cc) to at
  // least NCCL_MIN_CTAS. Two DGX nodes: the ring rule gives 2 × 8 NICs = 16, Hopper NVLS 16.
  auto spec = dgx(2, 360, 90);
  const auto m = all_gpus(build_cluster_topology(spec));
  spec.min_ctas = 8;  // below both: nothing changes
  Topology t = build_cluster_topology(spec);
  EXPECT_EQ(collective_channels(m, t), 16);
  EXPECT_EQ(plan_collective(CollectiveType::all_reduce, Algorithm::nvls, m, 0, t).channels, 16);
  spec.min_ctas = 24;  // above both: 24 each
  t = build_cluster_topology(spec);
  EXPECT_EQ(collective_channels(m, t), 24);
  EXPECT_EQ(plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t).channels, 24);
  EXPECT_EQ(plan_collective(CollectiveType::all_reduce, Algorithm::nvls, m, 0, t).channels, 24);
  spec.channels = 32;  // an explicit count above the floor stays
  EXPECT_EQ(collective_channels(m, build_cluster_topology(spec)), 32);
  spec.min_ctas = -1;
  EXPECT_THROW(build_cluster_topology(spec), std::invalid_argument);
}

TEST(NcclChannels, NvlsNeedsHopperNvswitch) {
  const Topology t = build_cluster_topology(dgx(1, 300, 80));
  EXPECT_THROW(plan_collective(CollectiveType::all_reduce, Algorithm::nvls, all_gpus(t), 0, t),
               std::invalid_argument);
  EXPECT_NE(choose_algorithm(CollectiveType::all_reduce, 8e9, all_gpus(t), t), Algorithm::nvls);
}

TEST(NcclChannels, CollnetNeedsSharp) {
  auto spec = dgx(2, 1000, 90);
  const Topology plain = build_cluster_topology(spec);
  EXPECT_THROW(
      plan_collective(CollectiveType::all_reduce, Algorithm::collnet, all_gpus(plain), 0, plain),
      std::invalid_argument);
  spec.fabric.sharp = true;
  const Topology sharp = build_cluster_topology(spec);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::collnet, all_gpus(sharp), 0, sharp);
  // In-network reduction: each NIC sends S/g once, whatever the node count.
  const double s = 8e9;
  std::vector<double> bytes;
  run_one(sharp, p, s, &bytes);
  for (LinkId l = 0; l < sharp.num_links(); ++l) {
    const LinkInfo& info = sharp.link(l);
    if (sharp.vertex(info.src).kind == VertexKind::nic && info.kind == LinkKind::ib) {
      EXPECT_NEAR(bytes[l], s / 8, 1e-6 * s);
    }
  }
}

// Where NCCL's pipeline stores and forwards a chunk (every hop with Simple, only the network hops
// with LL and LL128) and the cost of each chunk step across the network (docs/network.md
// "Pipeline fill", "Network steps"), worked by hand from NCCL's chunk rules.
constexpr double kNetStep = 6e-6;  // nccl::kNetStepUs, the fitted cost of one network step

TEST(NcclSteps, LlAndLl128TreesStoreAndForwardOnlyAtNetworkHops) {
  // 8 nodes of 8: a chunk goes up 7 chain hops and 3 tree levels and down again. Simple forwards
  // whole chunks at every hop: 2·(7 + 3) − 1 = 19 stages after the first. LL128 and LL forward
  // line by line over NVLink, so only the 2·3 network hops hold a chunk: 5 after the first.
  const nccl::PipelineShape eight{8, 8, 16.0, 90};
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::tree, Protocol::simple, eight).fill_steps, 19.0);
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::tree, Protocol::ll128, eight).fill_steps, 5.0);
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::tree, Protocol::ll, eight).fill_steps, 5.0);
  // Two nodes: one network hop up and one down, 1 after the first.
  const nccl::PipelineShape two{2, 8, 16.0, 90};
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::tree, Protocol::ll128, two).fill_steps, 1.0);
  // One node: no network hop, no fill, and no network steps either.
  const nccl::PipelineShape one{1, 8, 16.0, 90};
  const Pipeline single = nccl::pipeline_of(nccl::Row::tree, Protocol::ll128, one);
  EXPECT_EQ(single.fill_steps, 0.0);
  EXPECT_EQ(single.step_seconds, 0.0);
  EXPECT_EQ(single.fill(64.0 * 1024 * 1024), Time::zero());
}

TEST(NcclSteps, EveryChunkAcrossTheNetworkPaysOneStep) {
  // Tree LL128 on 8 nodes, 16 channels, 16 MiB: NCCL's chunk is 72000 B (test_nccl_channels:
  // ChunksShrinkAsNcclShrinksThem), so each channel sends ⌈16 MiB / (16 · 72000)⌉ = ⌈14.56⌉ =
  // 15 chunks. At 200 GB/s per payload byte: fill = 5 · 16 · 72000 B / 200 GB/s = 28.8 µs, plus
  // 15 steps × 6 µs = 90 µs.
  Pipeline tree = nccl::pipeline_of(nccl::Row::tree, Protocol::ll128, {8, 8, 16.0, 90});
  tree.seconds_per_byte = 1.0 / 200e9;
  const double s = 16.0 * 1024 * 1024;
  EXPECT_EQ(tree.chunk(s), 72000.0);
  EXPECT_EQ(tree.steps(s), 15.0);
  EXPECT_NEAR(tree.fill(s).seconds(), 28.8e-6 + 90e-6, 1e-11);
  // Simple takes the same steps: 16 MiB / (16 · 512 KiB) = 2, and all 19 stages hold a chunk:
  // 19 · 16 · 524288 B / 200 GB/s + 2 × 6 µs.
  Pipeline simple = nccl::pipeline_of(nccl::Row::tree, Protocol::simple, {8, 8, 16.0, 90});
  simple.seconds_per_byte = 1.0 / 200e9;
  EXPECT_EQ(simple.steps(s), 2.0);
  EXPECT_NEAR(simple.fill(s).seconds(), 19.0 * 16 * 524288 / 200e9 + 2 * kNetStep, 1e-11);
  // NVLSTree's 128 KiB steps are not charged (docs/network.md "Network steps"), nor NVLS on one
  // node; the ring has no fill: its steps are in its latency.
  const double g = 1024.0 * 1024 * 1024;
  Pipeline nvls = nccl::pipeline_of(nccl::Row::nvls_tree, Protocol::simple, {2, 8, 16.0, 90});
  nvls.seconds_per_byte = 1.0 / 400e9;
  EXPECT_EQ(nvls.steps(g), 64.0);
  EXPECT_NEAR(nvls.fill(g).seconds(), 2.0 * 128 * 131072 / 400e9, 1e-11);
  Pipeline node = nccl::pipeline_of(nccl::Row::nvls, Protocol::simple, {1, 8, 16.0, 90});
  node.seconds_per_byte = 1.0 / 400e9;
  EXPECT_NEAR(node.fill(g).seconds(), 2.0 * 128 * 131072 / 400e9, 1e-11);
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::ring, Protocol::ll128, {2, 8, 16.0, 90}).fill(g),
            Time::zero());
}

TEST(NcclSteps, ARingAcrossNodesTakesAtLeastItsStepsTimesTheNetworkStep) {
  // NCCL's ring loop: C channels × n ranks × the chunk, 2(n−1) steps a loop for an all-reduce
  // (n−1 for an all-gather), LL128 one step a chunk of 576000 B, Simple 2 slices a 2 MiB chunk.
  // 2 nodes of 8, 16 channels: LL128 at 1 MiB is one loop (< 16·16·576000 B) of 30 steps.
  const nccl::PipelineShape ar{2, 8, 16.0, 90, 16, 30.0};
  const Pipeline ll128 = nccl::pipeline_of(nccl::Row::ring, Protocol::ll128, ar);
  EXPECT_EQ(ll128.pipelines, 256.0);
  EXPECT_EQ(ll128.steps(1024.0 * 1024), 30.0);
  // Simple at 4 GiB: loops of 16·16·2 MiB = 512 MiB, 8 of them, × 30 steps × 2 slices = 480.
  const Pipeline simple = nccl::pipeline_of(nccl::Row::ring, Protocol::simple, ar);
  EXPECT_EQ(simple.steps(4.0 * 1024 * 1024 * 1024), 480.0);
  // All-gather: n−1 = 15 steps a loop.
  EXPECT_EQ(nccl::pipeline_of(nccl::Row::ring, Protocol::ll128, {2, 8, 16.0, 90, 16, 15.0})
                .steps(1024.0 * 1024),
            15.0);
  // One node: no network step.
  EXPECT_EQ(
      nccl::pipeline_of(nccl::Row::ring, Protocol::ll128, {1, 8, 16.0, 90, 8, 14.0}).step_seconds,
      0.0);

  // Simulated: the LL128 ring all-reduce of 1 MiB keeps all 16 channels (1 MiB ≥ 16 × 640 × 8 B),
  // 2 on each of the 8 NICs, so a step costs 2 × 1.5 µs: NCCL's LL128 base latency 14 µs + 30 × 3
  // µs = 104 µs, more than NCCL's L (14 + 28·1.9 + 2·4.0 = 75.2 µs). LL128 sends a chunk as one
  // step, so the steps add to the transfer: 2·15/16 MiB of payload at NCCL's 0.92 of the Simple
  // ring's 8 NICs of 25 GB/s (a channel's 20.6 GB/s × 2 a NIC is more than a NIC's 25).
  const Topology t = build_cluster_topology(dgx(2, 900, 90));
  const auto m = all_gpus(t);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t, Protocol::ll128);
  ASSERT_EQ(p.channels, 16);
  const double mib = 1024.0 * 1024;
  const double bus_1mib = 2.0 * 15.0 / 16.0 * mib;
  EXPECT_NEAR(run_one(t, p, mib), 14e-6 + 30 * 3e-6 + bus_1mib / (0.92 * 8 * 25e9), 1e-8);
  // At 4 GiB (Simple) the 480 steps take 2.9 ms, far under the bandwidth term: no change.
  const TransferPlan q =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t, Protocol::simple);
  const double s = 4.0 * 1024 * mib;
  EXPECT_EQ(q.phases[0].latency_for(s), q.phases[0].latency);
  EXPECT_GT(run_one(t, q, s), 8.4e-6 + 480 * kNetStep);
}

// A ring step costs 1.5 µs for every channel one NIC's proxy serves, of the channels NCCL keeps for
// the size (topoGetAlgoInfo drops one while S < channels × threads × bytes a thread: LL 512 ×
// 8·n, LL128 640 × 8, Simple 512 × 64), worked by hand (docs/network.md "The ring's steps are a
// floor").
TEST(NcclSteps, ARingStepCostsOneProxyActionPerChannelItsNicCarries) {
  EXPECT_EQ(nccl::ring_bytes_per_channel(Protocol::ll, 16.0), 65536.0);
  EXPECT_EQ(nccl::ring_bytes_per_channel(Protocol::ll128, 16.0), 5120.0);
  EXPECT_EQ(nccl::ring_bytes_per_channel(Protocol::simple, 16.0), 32768.0);
  // 2 nodes of 8, 16 channels over 8 NICs, LL all-gather (15 steps): below 128 KiB NCCL keeps
  // one channel, one per NIC at most; at 512 KiB 8 channels, still one a NIC; 1 MiB keeps all 16,
  // two a NIC.
  const Pipeline ll =
      nccl::pipeline_of(nccl::Row::ring, Protocol::ll, {2, 8, 16.0, 90, 16, 15.0, 8.0});
  EXPECT_EQ(ll.step_seconds, 1.5e-6);
  EXPECT_EQ(ll.step_floor.channels_per_nic(1024.0), 1.0);
  EXPECT_EQ(ll.step_floor.channels_per_nic(512.0 * 1024), 1.0);
  EXPECT_EQ(ll.step_floor.channels_per_nic(1024.0 * 1024), 2.0);
  // With 24 channels (NCCL_MIN_CTAS=24) three a NIC: 4.5 µs a step.
  const Pipeline ll128 =
      nccl::pipeline_of(nccl::Row::ring, Protocol::ll128, {2, 8, 24.0, 90, 16, 30.0, 8.0});
  EXPECT_EQ(ll128.step_floor.channels_per_nic(1024.0 * 1024), 3.0);

  // Simulated: the LL all-gather of 1 KiB on 2 × 8 GPUs takes NCCL's LL base latency 6.6 µs + 15
  // steps × 1.5 µs = 29.1 µs, more than NCCL's latency term (6.6 + 14 · 1.0 + 2.7 = 23.3 µs from
  // its constants; this topology's route latencies raise a hop a little).
  const Topology t = build_cluster_topology(dgx(2, 900, 90));
  const auto m = all_gpus(t);
  const TransferPlan ag =
      plan_collective(CollectiveType::all_gather, Algorithm::ring, m, 0, t, Protocol::ll);
  ASSERT_EQ(ag.channels, 16);
  EXPECT_GE(ag.phases[0].latency.seconds(), 23.3e-6);
  EXPECT_LT(ag.phases[0].latency.seconds(), 29.1e-6);
  // Its 15/16 KiB of bus bytes then move at NCCL's llMaxBw across two nodes, 39 GB/s busbw.
  EXPECT_NEAR(run_one(t, ag, 1024.0), 6.6e-6 + 15 * 1.5e-6 + 960.0 / 39e9, 1e-8);
  // The forced 24 channels: the LL128 all-reduce of 1 MiB takes 14 µs + 30 × 4.5 µs = 149 µs, and
  // its transfer as above (the NICs are still the bound).
  ClusterTopologySpec spec = dgx(2, 900, 90);
  spec.channels = 24;
  const Topology t24 = build_cluster_topology(spec);
  const TransferPlan ar =
      plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t24, Protocol::ll128);
  ASSERT_EQ(ar.channels, 24);
  EXPECT_NEAR(run_one(t24, ar, 1024.0 * 1024),
              14e-6 + 30 * 4.5e-6 + 2.0 * 15.0 / 16.0 * 1024 * 1024 / (0.92 * 8 * 25e9), 1e-8);
}

// NCCL's tuner reads the host CPU's vendor across nodes (src/graph/tuning.cc): on AMD x86 a ring
// step inside a node costs at least getNetOverhead = 2 µs (Intel 1), and LL is capped at the AMD
// row of llMaxBws, 22.5 GB/s busbw on two nodes and 19.0 from three (Intel 39, 20.4). Worked by
// hand for the 1 KiB LL all-gather of the test above: its 14 steps inside a node cost 14 × (2 − 1)
// = 14 µs more (L is 6.6 + 14 · 2.0 + the network hop = 37.3 µs at least, above its step floor of
// 29.1), and its 960 bus bytes move at 22.5 instead of 39 GB/s.
TEST(NcclSteps, AnAmdHostTakesNcclsAmdOverheadAndLlCap) {
  EXPECT_EQ(nccl::ll_max_bw(80, 2, true), 22.5);
  EXPECT_EQ(nccl::ll_max_bw(90, 4, true), 19.0);
  EXPECT_EQ(nccl::ll_max_bw(90, 1, true), 141.0);  // one node: by GPU, whatever the CPU
  ClusterTopologySpec spec = dgx(2, 900, 90);
  const Topology intel = build_cluster_topology(spec);
  spec.node.amd_cpu = true;
  const Topology amd = build_cluster_topology(spec);
  const auto m = all_gpus(intel);
  const auto plan = [&](const Topology& t) {
    return plan_collective(CollectiveType::all_gather, Algorithm::ring, m, 0, t, Protocol::ll);
  };
  const TransferPlan pi = plan(intel);
  const TransferPlan pa = plan(amd);
  const double li = pi.phases[0].latency.seconds();
  const double la = pa.phases[0].latency.seconds();
  EXPECT_NEAR(la - li, 14e-6, 1e-9);
  EXPECT_GE(la, 37.3e-6);
  EXPECT_NEAR(run_one(amd, pa, 1024.0), la + 960.0 / 22.5e9, 1e-8);
  EXPECT_NEAR(run_one(intel, pi, 1024.0), 6.6e-6 + 15 * 1.5e-6 + 960.0 / 39e9, 1e-8);
}

// A ring across nodes moves at most 20.6 GB/s of wire bytes a channel over the network
// (nccl::kNetChannelGBps): on 2 nodes of 8 H100 with 8 NICs of 50 GB/s and NCCL's 16 channels
// (2 a NIC) the channels, not the NICs, bind. Worked by hand for an all_gather (n = 16, every
// channel's network edge carries (n−1)/n · S / C, so busbw = (n−1)/n · S / t_bw):
// - Simple, 8 GiB: busbw = min(8 NICs × 50 = 400, 16 × 20.6 = 329.6) = 329.6 GB/s, so
//   t − L = 15/16 · 8 GiB / 329.6 GB/s (26.1 ms; its 480 steps × 3 µs are well under it).
// - Simple, 8 GiB, 24 channels: 24 × 20.6 = 494.4 > 400, the NICs bind: 15/16 · 8 GiB / 400 GB/s.
// - LL128, 16 MiB: busbw = min(400, 329.6) × 120/128 = 309 GB/s, and its 15 steps (one loop of
//   16 · 16 chunks of 576000 B) at 2 × 1.5 µs add to it: t = 14 + 15 × 3 µs + 15/16 · 16 MiB /
//   309 GB/s = 109.9 µs (published on 2 × 8 H200 A3 Ultra: 122.8 µs; SkyPilot's runs 116.2 and
//   117.6).
TEST(NcclChannels, ARingChannelCarriesAtMostItsNetworkRate) {
  ClusterTopologySpec spec = dgx(2, 900, 90);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(50.0);
  const Topology t = build_cluster_topology(spec);
  const auto m = all_gpus(t);
  const double gib8 = 8.0 * 1024 * 1024 * 1024;
  const TransferPlan simple =
      plan_collective(CollectiveType::all_gather, Algorithm::ring, m, 0, t, Protocol::simple);
  ASSERT_EQ(simple.channels, 16);
  const double l = simple.phases[0].latency_for(gib8).seconds();
  EXPECT_NEAR(run_one(t, simple, gib8) - l, 15.0 / 16.0 * gib8 / 329.6e9, 1e-7);

  spec.channels = 24;
  const Topology t24 = build_cluster_topology(spec);
  const TransferPlan wide =
      plan_collective(CollectiveType::all_gather, Algorithm::ring, m, 0, t24, Protocol::simple);
  ASSERT_EQ(wide.channels, 24);
  const double l24 = wide.phases[0].latency_for(gib8).seconds();
  EXPECT_NEAR(run_one(t24, wide, gib8) - l24, 15.0 / 16.0 * gib8 / 400e9, 1e-7);

  const double mib16 = 16.0 * 1024 * 1024;
  const TransferPlan ll128 =
      plan_collective(CollectiveType::all_gather, Algorithm::ring, m, 0, t, Protocol::ll128);
  // LL128 runs at NCCL's 0.92 of the Simple ring (nccl::kRingLL128Share): busbw 0.92 × 329.6 =
  // 303.2 GB/s (309 GB/s at the line's 120/128).
  EXPECT_NEAR(run_one(t, ll128, mib16), 14e-6 + 15 * 3e-6 + 15.0 / 16.0 * mib16 / 303.232e9, 1e-8);
}

TEST(NcclChannels, AnLl128RingRunsAtNcclsShareOfTheSimpleRing) {
  // 2 nodes of 8 H100 (900 GB/s NVLink, 8 NICs of 50 GB/s), 16 channels: the Simple ring's busbw
  // is its channels' 16 × 20.6 = 329.6 GB/s; NCCL rates LL128 at 0.92 of it (ncclTopoTuneModel),
  // 303.2 GB/s busbw (309 at the line's 120/128), under 16 × perChMaxRingLL128 = 587 GB/s.
  // All-gather: payload rate = busbw / (15/16).
  ClusterTopologySpec spec = dgx(2, 900, 90);
  spec.node.nic_bandwidth = Bandwidth::gigabytes_per_second(50.0);
  const Topology t = build_cluster_topology(spec);
  const TransferPlan p = plan_collective(CollectiveType::all_gather, Algorithm::ring, all_gpus(t),
                                         0, t, Protocol::ll128);
  ASSERT_EQ(p.channels, 16);
  EXPECT_NEAR(p.phases[0].rate_cap, 0.92 * 329.6e9 / (15.0 / 16.0), 1e3);
  // One node, as NCCL's tuner does it too: 8 × H100 at 360 GB/s NVLink, the Simple ring
  // all_gather's busbw is the link's B = 360 GB/s (payload rate 360 / (7/8) = 411.4 GB/s); LL128
  // at 0.92 of it, 331.2 GB/s busbw, under 18 channels × perChMaxRingLL128 36.7 = 660.6 GB/s
  // and under the line's 120/128 (337.5 GB/s).
  const Topology one = build_cluster_topology(dgx(1, 360, 90));
  const TransferPlan q = plan_collective(CollectiveType::all_gather, Algorithm::ring, all_gpus(one),
                                         0, one, Protocol::ll128);
  ASSERT_EQ(q.channels, 18);
  EXPECT_NEAR(q.phases[0].rate_cap, 0.92 * 360e9 / (7.0 / 8.0), 1e3);
  // With few channels the per-channel cap binds instead: 4 channels × 36.7 GB/s = 146.8 GB/s
  // busbw, under 0.92 × 360 = 331.2 GB/s.
  ClusterTopologySpec four = dgx(1, 360, 90);
  four.channels = 4;
  const Topology t4 = build_cluster_topology(four);
  const TransferPlan r = plan_collective(CollectiveType::all_gather, Algorithm::ring, all_gpus(t4),
                                         0, t4, Protocol::ll128);
  ASSERT_EQ(r.channels, 4);
  EXPECT_NEAR(r.phases[0].rate_cap, 4 * 36.7e9 / (7.0 / 8.0), 1e3);
}

TEST(NcclSteps, MidSizeTreeTimeGrowsByOneStepPerChunk) {
  // A 2-node tree LL128 all-reduce simulated on the flow model: its time is the latency term,
  // the bandwidth term at the rate cap, one chunk crossing the last network hop, and 6 µs per
  // chunk step. 4 MiB and 8 MiB on 16 channels: depth 1 + 1 + 0.8 = 2.8, so NCCL halves the
  // 576000 B chunk while a channel holds < 22.4 chunks and it is > 131072 B (to 72000), then
  // while < 5.6 chunks and > 32768 B: 4 MiB (262144 B a channel, 3.6 chunks of 72000) → 36000,
  // 7.28 chunks, 8 steps; 8 MiB (7.28 chunks of 72000) keeps 72000, 8 steps.
  // NVLink 900 GB/s, so the NICs (and the tree's rate cap), not the chain, bind.
  const Topology t = build_cluster_topology(dgx(2, 900, 90));
  const auto m = all_gpus(t);
  const TransferPlan p =
      plan_collective(CollectiveType::all_reduce, Algorithm::tree, m, 0, t, Protocol::ll128);
  const Phase& ph = p.phases[0];
  ASSERT_EQ(p.channels, 16);
  for (const auto& [bytes, chunk] :
       {std::pair{4.0 * 1024 * 1024, 36000.0}, std::pair{8.0 * 1024 * 1024, 72000.0}}) {
    EXPECT_EQ(ph.pipeline.chunk(bytes), chunk);
    EXPECT_EQ(ph.pipeline.steps(bytes), 8.0);
    const double fill = (ph.latency_for(bytes) - ph.latency).seconds();
    EXPECT_NEAR(fill, 1.0 * 16 * chunk * ph.pipeline.seconds_per_byte + 8 * kNetStep, 1e-9);
    // The rest is the bandwidth term at the phase's cap (payload bytes/s).
    const double rest = run_one(t, p, bytes) - ph.latency_for(bytes).seconds();
    EXPECT_NEAR(rest, bytes / ph.rate_cap, 0.02 * bytes / ph.rate_cap);
  }
}

}  // namespace
}  // namespace clustersim::engine
