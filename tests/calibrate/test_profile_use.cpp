// Using a calibration profile in a run (docs/calibration.md "Using a profile"): collectives the
// profile covers cost α + S·factor/busbw in the analytical and flow models, the compute model takes
// the GEMM sweep's efficiency, the summary notes say which figures came from the profile, and a
// bad profile is a scenario error naming the profile file and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/topology_builders.hpp"
#include "models/compute_model.hpp"
#include "models/hardware.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim {
namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA) + "/calibration/";
const std::string kScenario = kData + "ddp_a100x8.yaml";

// (payload bytes, seconds from launch to end) of every all-reduce of rank 0, in issue order.
std::vector<std::pair<double, double>> all_reduce_times(const models::RunOutput& out) {
  std::vector<std::pair<double, double>> v;
  const auto& s = out.built.schedule;
  for (engine::OpId id = 0; id < s.ops.size(); ++id) {
    const engine::Op& op = s.ops[id];
    if (op.rank != 0 || op.kind != engine::OpKind::collective ||
        op.collective != engine::CollectiveType::all_reduce)
      continue;
    v.push_back({static_cast<double>(op.bytes),
                 (out.timeline.end[id] - out.timeline.launch[id]).seconds()});
  }
  return v;
}

bool has_note(const models::Result& r, const std::string& part) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

models::RunOutput run(const std::string& kind, const std::vector<std::string>& sets = {},
                      bool calibrated = true) {
  models::RunOptions options;
  options.network = kind;
  models::Scenario sc = models::load_scenario(kScenario, sets);
  if (!calibrated) sc.simulation.calibration.clear();
  return models::run_scenario(sc, options);
}

// The scenario's buckets: 4 blocks of 1e6 bf16 gradients (2 bytes) = 2e6 bytes each, in reverse
// order; the first bucket closes past 1 MiB (block 4 alone), the rest fit one 25 MB bucket.
const std::vector<double> kBuckets = {2e6, 6e6};

// Profile a100x8_allreduce.json, all_reduce over 8 ranks on 1 node, range 131072 B .. 1 GiB:
// α = 30 us, busbw = 200 GB/s, bus_factor 1.75 (= 2·7/8).
double profile_time(double s) {
  return 30e-6 + s * 1.75 / 200e9;
}

TEST(ProfileUse, CollectivesTakeTheProfilesTimeInBothModels) {
  for (auto kind : {"analytical", "flow"}) {
    const auto times = all_reduce_times(run(kind));
    ASSERT_EQ(times.size(), kBuckets.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_EQ(times[i].first, kBuckets[i]);
      // 2e6 B: 30 + 17.5 = 47.5 us; 6e6 B: 30 + 52.5 = 82.5 us.
      EXPECT_NEAR(times[i].second, profile_time(kBuckets[i]), 1e-11)
          << "model " << kind << " bucket " << i;
    }
  }
}

TEST(ProfileUse, WithoutTheProfileTheTopologyDecides) {
  // Flow model, NCCL's tuner on the DGX A100's NVSwitch (docs/network.md), NVLink 300 GB/s
  // derated by the default 0.8 (simulation.link_efficiency) = 240 GB/s, n = 8, LL128:
  //   ring: 14 us + 14 steps × 1.9 us + 1.75·S / (0.92 · 240 GB/s): NCCL rates an LL128 ring
  //   at 0.92 of the Simple ring's bus bandwidth (the link's 240 GB/s; ncclTopoTuneModel), which
  //   is under LL128's wire bytes (120/128 = 0.9375) and 12 channels × perChMaxRingLL128 20 GB/s
  //   tree (a chain on one node): 14 us + 2·7 × 1.25 us + S / (7/9 · 240/1.75 GB/s), its
  //   bandwidth derated by NCCL's treeCorrectionFactor for LL128: 0.6 at 2e6 B (log2(S/64) = 14),
  //   0.8 at 6e6 B (16)
  // and the fastest estimate wins: 2e6 B: ring 40.6 + 15.85 = 56.45 us against tree 31.5 +
  // 18.75/0.6 = 62.75; 6e6 B: ring 40.6 + 47.55 = 88.15 us against tree 31.5 + 56.25/0.8 =
  // 101.8. Simple and LL are slower at both sizes; a ring has no pipeline fill, so the simulated
  // time is the ring's formula.
  const auto with = all_reduce_times(run("flow"));
  const auto without = all_reduce_times(run("flow", {}, /*calibrated=*/false));
  ASSERT_EQ(without.size(), kBuckets.size());
  for (std::size_t i = 0; i < without.size(); ++i) {
    const double s = kBuckets[i];
    const double ring = 40.6e-6 + 1.75 * s / (0.92 * 0.8 * 300e9);
    const double topology = ring;
    EXPECT_NEAR(without[i].second, topology, 1e-11);
    EXPECT_NEAR(with[i].second - without[i].second, profile_time(s) - topology, 2e-11);
  }
}

TEST(ProfileUse, NotesSayWhichFiguresCameFromTheProfile) {
  const auto out = run("flow");
  EXPECT_TRUE(
      has_note(out.result,
               "all_reduce on 8 ranks/1 node: fitted α 30 us, busbw 200 GB/s (128 KiB–1 GiB) "
               "from profile a100x8_allreduce.json"))
      << ::testing::PrintToString(out.result.notes);
  EXPECT_TRUE(has_note(out.result, "compute efficiency from profile GEMM sweep (bf16)"));
}

TEST(ProfileUse, NearestShapeIsUsedAndNoted) {
  // The profile only has all_reduce over 4 ranks (α 25 us, busbw 450 GB/s); the scenario's 8 ranks
  // take it with nccl-tests' factor for 8 ranks, 1.75. 450 GB/s exceeds the 300 GB/s NVLink, so
  // the flow model scales its flows' bytes and must still reproduce the profile's time.
  for (auto kind : {"analytical", "flow"}) {
    const auto out = run(kind, {"simulation.calibration=" + kData + "a100x4_allreduce_fast.json"});
    const auto times = all_reduce_times(out);
    ASSERT_EQ(times.size(), kBuckets.size());
    for (std::size_t i = 0; i < times.size(); ++i)
      EXPECT_NEAR(times[i].second, 25e-6 + kBuckets[i] * 1.75 / 450e9, 1e-11);
    EXPECT_TRUE(
        has_note(out.result,
                 "all_reduce on 8 ranks/1 node: nearest shape 4 ranks on 1 node (bus factor "
                 "1.75 for 8 ranks), fitted α 25 us, busbw 450 GB/s"))
        << ::testing::PrintToString(out.result.notes);
    // The profile has no GEMM sweep: the preset's efficiency, and the note says so.
    EXPECT_TRUE(has_note(out.result, "profile a100x4_allreduce_fast.json has no bf16 GEMM"));
  }
}

TEST(ProfileUse, MalformedProfileIsAScenarioErrorNamingFileAndKey) {
  try {
    run("flow", {"simulation.calibration=" + kData + "malformed_busbw.json"});
    FAIL() << "a negative busbw was accepted";
  } catch (const models::ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("simulation.calibration"), std::string::npos) << what;
    EXPECT_NE(what.find("malformed_busbw.json"), std::string::npos) << what;
    EXPECT_NE(what.find("fitted.collectives[0].ranges[0].busbw"), std::string::npos) << what;
  }
}

TEST(ProfileUse, MissingProfileIsAScenarioErrorNamingTheKey) {
  try {
    models::load_scenario(kScenario, {"simulation.calibration=" + kData + "no_such_profile.json"});
    FAIL() << "a missing profile was accepted";
  } catch (const models::ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("simulation.calibration"), std::string::npos) << what;
    EXPECT_NE(what.find("no_such_profile.json"), std::string::npos) << what;
  }
}

TEST(ProfileUse, ComputeEfficiencyComesFromTheGemmSweep) {
  // bf16 points: 1e9 FLOP at 50 TFLOP/s, 1e12 FLOP at 250 TFLOP/s; A100 bf16 peak 312 TFLOP/s.
  const models::ComputeProfile profile({{"bf16", {{1e9, 5e13}, {1e12, 2.5e14}}}});
  const models::GpuSpec gpu = *models::find_gpu("A100-SXM4-80GB");
  const models::RooflineComputeModel model(gpu, &profile);
  engine::Op op;
  op.kind = engine::OpKind::compute;
  op.set_precision(static_cast<std::uint8_t>(models::Precision::bf16));
  // At 1e12 FLOP: launch 4 us + 1e12 / 250e12 = 4.004 ms.
  EXPECT_NEAR(model.duration(op, 1e12).seconds(), 4e-6 + 4e-3, 1e-11);
  // At √(1e9·1e12) ≈ 3.162e10 FLOP, halfway in log(flops): 150 TFLOP/s.
  const double between = std::sqrt(1e9 * 1e12);
  EXPECT_NEAR(model.duration(op, between).seconds(), 4e-6 + between / 1.5e14, 1e-11);
  // fp16 is not in the profile: the preset's 0.7 efficiency of 312 TFLOP/s.
  op.set_precision(static_cast<std::uint8_t>(models::Precision::fp16));
  EXPECT_NEAR(model.duration(op, 1e12).seconds(), 4e-6 + 1e12 / (312e12 * 0.7), 1e-11);
  EXPECT_TRUE(model.profiled(models::Precision::bf16));
  EXPECT_FALSE(model.profiled(models::Precision::fp16));
}

// Two identical profiled all-reduces at once on the same 8 GPUs of a DGX A100 (flow model): every
// NVLink carries two capped flows; the fair share 150 GB/s is below the 200 GB/s cap, so each ends
// at α + 1.75·S/150 GB/s. The analytical model ignores contention: α + 1.75·S/200 GB/s.
TEST(ProfileUse, ProfiledFlowsShareLinksUnderContention) {
  engine::ClusterTopologySpec spec;
  spec.node = models::find_node("dgx-a100")->topology;
  const engine::Topology topo = engine::build_cluster_topology(spec);
  const engine::CollectiveProfile profile(
      {{engine::CollectiveType::all_reduce, {8, 1}, 1.75, {{8.0, 1e9, 30e-6, 200e9, 0.0}}}});
  std::vector<engine::EndpointId> members = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto plan = engine::plan_collective(engine::CollectiveType::all_reduce,
                                            engine::Algorithm::ring, members, 0, topo);
  const double s = 6e6;
  for (auto kind : {"flow", "analytical"}) {
    auto model = engine::make_network_model(kind, topo, &profile);
    model->start(0, plan, s, engine::Time::zero());
    model->start(1, plan, s, engine::Time::zero());
    std::vector<engine::TransferId> done;
    engine::Time t;
    while (done.size() < 2) {
      t = model->next_event_time();
      model->advance(t, done);
    }
    const double bw = std::string_view(kind) == "flow" ? 150e9 : 200e9;
    EXPECT_NEAR(t.seconds(), 30e-6 + 1.75 * s / bw, 1e-11) << model->name();
    // Physical bytes on a ring edge's first link: two transfers × 1.75·S.
    const auto route = topo.route(0, 1);
    EXPECT_NEAR(model->link_bytes()[route.front()], 2 * 1.75 * s, 1e-3);
    ASSERT_EQ(model->profile_uses().size(), 1u);
    EXPECT_TRUE(model->profile_uses()[0].exact);
  }
}

}  // namespace
}  // namespace clustersim
