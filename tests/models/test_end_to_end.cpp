// Whole scenarios through models::run_scenario: the network models agree where they must
// (DESIGN.md "Network models"): `analytical` and `flow` differ only by contention, so on a
// contention-free scenario they agree within 2 %; `ideal` makes communication free.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR "/";

Result run_with(const std::string& file, const std::string& kind) {
  RunOptions options;
  options.network = kind;
  return run_scenario(load_scenario(kScenarios + file), options).result;
}

// ResNet-50 DDP on one DGX A100: the all-reduces run one at a time on the comm stream and a ring
// over an NVSwitch puts one flow on each GPU's uplink and downlink, so nothing contends.
TEST(EndToEnd, AnalyticalAndFlowAgreeWithoutContention) {
  for (const char* file : {"resnet50-ddp-dgx-a100.yaml", "resnet50-ddp-pcie-8gpu.yaml"}) {
    SCOPED_TRACE(file);
    const Result a = run_with(file, "analytical");
    const Result f = run_with(file, "flow");
    ASSERT_GT(f.iteration_time_s, 0.0);
    EXPECT_LT(std::abs(a.iteration_time_s - f.iteration_time_s) / f.iteration_time_s, 0.02)
        << "analytical " << a.iteration_time_s << " s, flow " << f.iteration_time_s << " s";
    EXPECT_EQ(a.network_model, "analytical");
    EXPECT_EQ(f.network_model, "flow");
  }
}

// Free communication: nothing is exposed, and the iteration is no longer than with a real
// network (communication can only add waiting).
TEST(EndToEnd, IdealNetworkMakesExposedCommunicationZero) {
  const std::string file = "bert-large-ddp-4xdgx-a100.yaml";
  const Result ideal = run_with(file, "ideal");
  const Result flow = run_with(file, "flow");
  EXPECT_EQ(ideal.exposed_comm_s.total, 0.0);
  EXPECT_EQ(ideal.exposed_comm_s.dp, 0.0);
  EXPECT_EQ(ideal.breakdown_s.idle, 0.0);
  EXPECT_GT(flow.exposed_comm_s.total, 0.0);  // 32 GPUs over 200 Gb/s NICs cannot hide it all
  EXPECT_LE(ideal.iteration_time_s, flow.iteration_time_s);
}

// Compute shares the SMs with communication (docs/fidelity.md "Compute and communication share
// the SMs"). FSDP overlaps its all-gathers and reduce-scatters with compute: with sharing, the
// critical rank's compute takes longer, but never more than SMs / (SMs - held) times as long,
// held <= 2 x 32 (two collectives at once, NCCL's 32-channel maximum) of the A100's 108 SMs.
// Without overlapped communication (DDP with overlap: false: the all-reduces wait for the
// backward) nothing changes.
TEST(EndToEnd, OverlappedComputeSlowsByAtMostTheSmsCommunicationHolds) {
  auto run = [](const std::string& file, bool sharing, bool overlap) {
    Scenario sc = load_scenario(kScenarios + file);
    sc.simulation.sm_sharing = sharing;
    sc.parallel.overlap = overlap;
    return run_scenario(sc, RunOptions{}).result;
  };
  const std::string fsdp = "llama2-7b-fsdp-2xdgx-a100.yaml";
  const Result free = run(fsdp, false, true);
  const Result shared = run(fsdp, true, true);
  const double compute_free = free.breakdown_s.compute + free.breakdown_s.recompute;
  const double compute_shared = shared.breakdown_s.compute + shared.breakdown_s.recompute;
  EXPECT_GT(compute_shared, compute_free * 1.001);
  EXPECT_LE(compute_shared, compute_free * 108.0 / (108.0 - 64.0));
  EXPECT_GT(shared.iteration_time_s, free.iteration_time_s);

  const std::string ddp = "llama2-7b-ddp-2xdgx-a100.yaml";
  EXPECT_EQ(run(ddp, true, false).iteration_time_s, run(ddp, false, false).iteration_time_s);
}

// The delay the timeline reports per rank (and the summary's note) is what rank 0's GPU ops took
// in all beyond their full-GPU durations: the sum of their spans with sharing minus without.
TEST(EndToEnd, TheSmSharingDelayIsTheExtraTimeOfTheRanksGpuOps) {
  auto run = [](bool sharing) {
    Scenario sc = load_scenario(kScenarios + "llama2-7b-fsdp-2xdgx-a100.yaml");
    sc.simulation.sm_sharing = sharing;
    return run_scenario(sc, RunOptions{});
  };
  const RunOutput shared = run(true), free = run(false);
  auto gpu_time = [](const RunOutput& out) {
    const auto& s = out.built.schedule;
    double sum = 0;
    for (engine::OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].rank == 0 && s.ops[id].kind == engine::OpKind::compute)
        sum += (out.timeline.end[id] - out.timeline.start[id]).seconds();
    return sum;
  };
  ASSERT_FALSE(shared.timeline.sm_sharing_delay.empty());
  EXPECT_TRUE(free.timeline.sm_sharing_delay.empty());
  const double delay = shared.timeline.sm_sharing_delay[0].seconds();
  EXPECT_GT(delay, 0.0);
  EXPECT_NEAR(delay, gpu_time(shared) - gpu_time(free), 1e-9);
  const auto& notes = shared.result.notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("on the SMs that overlapping NCCL kernels left it") != std::string::npos;
  }));
}

// Folding (docs/performance.md "Folding"): every data-parallel replica runs the same ops, and the
// analytical model has no contention, so simulating replica 0 alone must give the figures of the
// whole run while building and simulating 1/replicas of the ops.
TEST(EndToEnd, AFoldedRunGivesTheFiguresOfTheWholeRunUnderTheAnalyticalModel) {
  struct Case {
    const char* file;
    const char* overrides;
    int replicas;
  };
  const Case cases[] = {
      {"bert-large-ddp-4xdgx-a100.yaml", "", 32},
      {"llama2-7b-fsdp-2xdgx-a100.yaml", "", 16},
      {"llama3-70b-8xdgx-h100-interleaved.yaml", "training.global_batch=16", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto run = [&](const char* fold, const char* topology) {
      std::vector<std::string> sets = {std::string("simulation.fold=") + fold,
                                       std::string("cluster.network.topology=") + topology};
      if (*c.overrides) sets.emplace_back(c.overrides);
      RunOptions options;
      options.network = "analytical";
      return run_scenario(load_scenario(kScenarios + c.file, sets), options);
    };
    for (const char* topology : {"single-switch", "fat-tree"}) {
      SCOPED_TRACE(topology);
      const RunOutput whole = run("none", topology);
      const RunOutput folded = run("dp", topology);
      EXPECT_EQ(whole.built.folded_replicas, 1);
      EXPECT_EQ(folded.built.folded_replicas, c.replicas);
      EXPECT_EQ(folded.built.schedule.ops.size() * static_cast<std::size_t>(c.replicas),
                whole.built.schedule.ops.size());
      const Result& w = whole.result;
      const Result& f = folded.result;
      EXPECT_NEAR(f.iteration_time_s, w.iteration_time_s, 1e-9 * w.iteration_time_s);
      EXPECT_NEAR(f.tflops_per_gpu, w.tflops_per_gpu, 1e-9 * w.tflops_per_gpu);
      EXPECT_NEAR(f.mfu, w.mfu, 1e-9 * w.mfu);
      EXPECT_NEAR(f.exposed_comm_s.dp, w.exposed_comm_s.dp, 1e-9 * w.iteration_time_s);
      EXPECT_NEAR(f.breakdown_s.idle, w.breakdown_s.idle, 1e-9 * w.iteration_time_s);
      EXPECT_EQ(f.memory.peak.total(), w.memory.peak.total());
      EXPECT_TRUE(f.links.empty());  // replica 0's traffic alone is no link's real load
      EXPECT_FALSE(w.links.empty());
    }
    // `auto` folds only where it is provably exact: NVSwitch nodes, one NIC per GPU, one
    // fabric switch; a fat tree's replicas may differ by a leaf crossing.
    EXPECT_EQ(run("auto", "single-switch").built.folded_replicas, c.replicas);
    EXPECT_EQ(run("auto", "fat-tree").built.folded_replicas, 1);
  }
}

// Every (phase, share) a run of a shipped scenario reports, in order, under the analytical model.
std::vector<std::pair<std::string, double>> progress_reports(const std::string& scenario) {
  std::vector<std::pair<std::string, double>> seen;
  RunOptions options;
  options.network = "analytical";
  options.progress = [&](std::string_view phase, double f) { seen.emplace_back(phase, f); };
  run_scenario(load_scenario(kScenarios + scenario), options);
  return seen;
}

// Progress (issue 10): after the set-up (unknown share), the build reports the share of ranks whose
// ops are built, k/8 for the 8 ranks of a PCIe server (no folding there), before the simulation.
TEST(EndToEnd, TheBuildPhaseReportsItsShareOfRanks) {
  const auto seen = progress_reports("llama2-7b-pcie-pp4.yaml");
  std::vector<double> building;
  for (const auto& [phase, f] : seen) {
    if (phase == "simulating") break;
    if (phase == "building" && f != kUnknownFraction) building.push_back(f);
  }
  ASSERT_EQ(building.size(), 8u);
  for (std::size_t k = 0; k < building.size(); ++k)
    EXPECT_DOUBLE_EQ(building[k], static_cast<double>(k + 1) / 8);
}

// Matching pairs the communication ops before the first event: its own phase, between building
// and simulating, half done after the collectives' scan and done after the point-to-point scan
// (a pipeline has both); simulating then starts from 0.
TEST(EndToEnd, MatchingIsAPhaseOfItsOwnBeforeSimulating) {
  const auto seen = progress_reports("llama2-7b-pcie-pp4.yaml");
  std::vector<std::pair<std::string, double>> around;  // from the last building report on
  bool built = false;
  for (const auto& [phase, f] : seen) {
    if (phase == "building") {
      built = true;
      around.clear();
      continue;
    }
    if (built && around.size() < 4) around.emplace_back(phase, f);
  }
  // llama2-7b-pcie-pp4 has fewer than 65,536 ops: only the ends of the two scans report.
  const std::vector<std::pair<std::string, double>> expected = {
      {"matching", 0.0}, {"matching", 0.5}, {"matching", 1.0}, {"simulating", 0.0}};
  EXPECT_EQ(around, expected);
}

// The metrics phase reports its share: from 0 to 1, rising, after the simulation and last of all
// (a transformer run: the FLOP sum, the critical rank, its sweep and the memory each report).
TEST(EndToEnd, MetricsAreAPhaseWithAShareFromZeroToOne) {
  const auto seen = progress_reports("llama2-7b-pcie-pp4.yaml");
  std::vector<double> metrics;
  bool after_simulating = false;
  for (const auto& [phase, f] : seen) {
    if (phase == "simulating") after_simulating = true;
    if (phase == "metrics") {
      EXPECT_TRUE(after_simulating);
      metrics.push_back(f);
    } else {
      EXPECT_TRUE(metrics.empty()) << phase << " after metrics";
    }
  }
  ASSERT_GE(metrics.size(), 6u);  // the phase's start, four steps, the end
  EXPECT_EQ(metrics.front(), 0.0);
  EXPECT_EQ(metrics.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(metrics.begin(), metrics.end()));
}

// A pipeline stage holds only its own layers' parameters. By hand: 4 layers of 1e6 parameters on
// pp = 2 stages of one GPU each (dp = 1) put 2 layers = 2e6 parameters on each GPU: weights and
// gradients 2e6 × 2 B (bf16) = 4e6 B each, Adam state 2e6 × 12 B (m, v and an fp32 master copy;
// DESIGN.md "Memory model") = 2.4e7 B; no DDP buckets without data parallelism.
TEST(EndToEnd, MemoryCountsOnlyTheStagesOwnParameters) {
  const Scenario sc = parse_scenario(R"(
cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2}
model:
  layers: [{name: block, params: 1e6, forward_flops: 1e9, repeat: 4}]
training: {global_batch: 2, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {pp: 2}
)",
                                     "pp-memory.yaml");
  const Result r = run_scenario(sc).result;
  EXPECT_DOUBLE_EQ(r.memory.peak.weights, 4e6);
  EXPECT_DOUBLE_EQ(r.memory.peak.gradients, 4e6);
  EXPECT_DOUBLE_EQ(r.memory.peak.optimizer, 2.4e7);
  EXPECT_DOUBLE_EQ(r.memory.peak.buffers, 0.0);
}

}  // namespace
}  // namespace clustersim::models
