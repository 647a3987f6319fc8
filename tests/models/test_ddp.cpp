// DDP on a hand-built model (DESIGN.md "What each parallel plan must reproduce", DDP): bucket
// assignment, iteration time with overlap on and off, and gradient accumulation, every figure
// worked out by hand below from the roofline and the ring all-reduce formula.
//
// The cluster: one NVSwitch node of 4 GPUs, each GPU 100 GB/s (per direction) to the switch, 1 us
// per link; bf16 peak 100 TFLOP/s, fp32 peak 10 TFLOP/s, HBM 1 TB/s, efficiencies 1, no launch
// overhead. The model, forward order (bf16 gradients, 2 bytes each):
//   L0: 3e5 params (0.6 MB of gradients), 4e9 forward FLOPs per sample
//   L1: 4e5 params (0.8 MB),               1e9
//   L2: 6e5 params (1.2 MB),               2e9
//   L3: 2e5 params (0.4 MB),               1e9
//
// Op times (micro-batch 1; compute-bound, since the bytes term is ≤ 2.4 us):
//   forward  L0 40 us, L1 10 us, L2 20 us, L3 10 us (FLOPs / 1e14)
//   backward L3 20 us, L2 40 us, L1 20 us, L0 80 us (twice forward)
//   optimizer (Adam, fp32 state): 1.5e6 params × 28 B / 1e12 B/s = 42 us (memory-bound; its
//   1.5e7 FLOPs / 1e13 = 1.5 us)
//
// Buckets (PyTorch: reverse order, the first closes at >= 1 MiB = 1,048,576 B, the rest at
// bucket_mb = 0.5 MiB = 524,288 B; a tensor is never split):
//   bucket 0 = L3 + L2: 0.4 MB < 1 MiB stays open, + 1.2 MB = 1.6e6 B closes it
//   bucket 1 = L1: 0.8e6 B >= 0.5 MiB
//   bucket 2 = L0: 0.6e6 B >= 0.5 MiB
// (with bucket_mb alone for the first, L3 would have closed a bucket by itself).
//
// All-reduce over n = 4 as NCCL's tuner picks it (docs/network.md): ring + LL128 for all three
// buckets. Latency: LL128 base 14 us + 2(n−1) = 6 steps of max(1.9 us NVLink hop, the 2 us
// GPU→NVSwitch→GPU route) = 26 us. Bandwidth: the Simple ring's payload rate is B / (2(n−1)/n) =
// 1e11 / 1.5 B/s (each GPU's uplink carries 1.5·S), and NCCL rates an LL128 ring at 0.92 of it
// (kRingLL128Share, ncclTopoTuneModel: busBw × 0.92), under LL128's own wire bytes (128/120 of
// the payload: 1/1.0667 = 0.9375 of the line) and under C × perChMaxRingLL128 (5 channels × 20
// GB/s busbw = 100 GB/s against 0.92 × 100 = 92): so 1.5·S / (0.92 · 1e11). (Simple would take
// 28.8 us + 1.5·S/B, LL 18.6 us + 3·S/B: both slower here.)
//   bucket 0: 26 us + 1.5 × 1.6e6 / 9.2e10 = 26 + 26.0870 = 52.0870 us
//   bucket 1: 26 us + 1.5 × 0.8e6 / 9.2e10 = 26 + 13.0435 = 39.0435 us
//   bucket 2: 26 us + 1.5 × 0.6e6 / 9.2e10 = 26 +  9.7826 = 35.7826 us
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

constexpr double kUs = 1e-6;
// Times are integer picoseconds; sums of a dozen rounded terms stay within a few ps.
constexpr double kTol = 1e-11;

const std::string kScenario = R"(
name: ddp-by-hand
cluster:
  nodes: 1
  gpus_per_node: 4
  gpu:
    peak_tflops: {bf16: 100, fp32: 10}
    hbm_bandwidth: 1TB/s
    memory: 80GB
    compute_efficiency: 1
    memory_efficiency: 1
    launch_overhead: 0us
  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}
model:
  name: four-layers
  layers:
    - {name: L0, params: 3e5, forward_flops: 4e9}
    - {name: L1, params: 4e5, forward_flops: 1e9}
    - {name: L2, params: 6e5, forward_flops: 2e9}
    - {name: L3, params: 2e5, forward_flops: 1e9}
training: {global_batch: 4, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: ddp, bucket_mb: 0.5, overlap: true}
# The nominal 100 GB/s; every rank simulated, so each rank's timeline can be checked.
simulation: {network_model: analytical, link_efficiency: {nvlink: 1}, fold: none}
)";

// The three bucket all-reduces (us), from the header: 26 us + 1.5·S / (0.92 × 1e11 B/s).
constexpr double kBucketUs[3] = {26.0 + 1.5 * 1.6e6 / 0.92e11 / kUs,
                                 26.0 + 1.5 * 0.8e6 / 0.92e11 / kUs,
                                 26.0 + 1.5 * 0.6e6 / 0.92e11 / kUs};
constexpr double kAdamUs = 42.0;

RunOutput run(const std::vector<std::string>& overrides) {
  return run_scenario(parse_scenario(kScenario, "ddp-by-hand.yaml", overrides));
}

// Start and end (seconds) of rank `rank`'s dp all-reduces, in issue order.
std::vector<std::pair<double, double>> all_reduces(const RunOutput& out, engine::Rank rank) {
  std::vector<std::pair<double, double>> spans;
  const auto& s = out.built.schedule;
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == rank && s.ops[id].category == engine::Category::dp_comm)
      spans.emplace_back(out.timeline.launch[id].seconds(), out.timeline.end[id].seconds());
  return spans;
}

TEST(Ddp, BucketsFollowPyTorchReverseOrderWithA1MiBFirstBucket) {
  const RunOutput out = run({});
  ASSERT_EQ(out.built.buckets.size(), 3u);
  const double expected_bytes[] = {1.6e6, 0.8e6, 0.6e6};  // see the header
  const int expected_first_layer[] = {2, 1, 0};
  const int expected_last_layer[] = {3, 1, 0};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(static_cast<double>(out.built.buckets[k].bytes), expected_bytes[k]) << "bucket " << k;
    EXPECT_EQ(out.built.buckets[k].first_layer, expected_first_layer[k]) << "bucket " << k;
    EXPECT_EQ(out.built.buckets[k].last_layer, expected_last_layer[k]) << "bucket " << k;
  }
}

// Overlap on. Compute stream: forward 0–80; backward L3 80–100, L2 100–140, L1 140–160,
// L0 160–240. Comm stream (FIFO), with b0, b1, b2 the bucket times of the header: bucket 0 ready
// at 140 (L2's backward) → 140–(140 + b0) = 192.087; bucket 1 ready at 160 but the stream is busy
// → 192.087–(140 + b0 + b1) = 231.130; bucket 2 ready at 240 → 240–(240 + b2) = 275.783.
// Optimizer after the last bucket: 275.783–317.783 us.
void expect_overlapped_timeline(const RunOutput& out) {
  const double b0 = kBucketUs[0], b1 = kBucketUs[1], b2 = kBucketUs[2];
  for (engine::Rank r = 0; r < 4; ++r) {
    const auto spans = all_reduces(out, r);
    ASSERT_EQ(spans.size(), 3u);
    const double expected[3][2] = {{140, 140 + b0}, {140 + b0, 140 + b0 + b1}, {240, 240 + b2}};
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_NEAR(spans[k].first, expected[k][0] * kUs, kTol) << "rank " << r << " bucket " << k;
      EXPECT_NEAR(spans[k].second, expected[k][1] * kUs, kTol) << "rank " << r << " bucket " << k;
    }
  }
  EXPECT_NEAR(out.result.iteration_time_s, (240 + b2 + kAdamUs) * kUs, kTol);
}

TEST(Ddp, OverlapStartsEachBucketWhenItsLastGradientIsReady) {
  const RunOutput out = run({});
  expect_overlapped_timeline(out);
  const Result& r = out.result;
  const double b2 = kBucketUs[2];
  const double in_flight = kBucketUs[0] + kBucketUs[1] + kBucketUs[2];  // 126.913 us
  const double iteration = 240 + b2 + kAdamUs;                          // 317.783 us
  // Exposed: only bucket 2 (240–275.783); in flight 140–231.130 and 240–275.783 = 126.913 us.
  EXPECT_NEAR(r.exposed_comm_s.dp, b2 * kUs, kTol);
  EXPECT_NEAR(r.exposed_comm_s.total, b2 * kUs, kTol);
  EXPECT_NEAR(r.breakdown_s.compute, (240 + kAdamUs) * kUs, kTol);
  EXPECT_NEAR(r.breakdown_s.idle, 0.0, kTol);
  EXPECT_NEAR(r.comm_overlap_fraction, 1.0 - b2 / in_flight, 1e-6);
  // Model FLOPs per GPU: 3 × 8e9 = 2.4e10 at 1e14 FLOP/s is 240 us of the 317.783.
  EXPECT_NEAR(r.mfu, 240.0 / iteration, 1e-6);
  EXPECT_NEAR(r.samples_per_s, 4 / (iteration * kUs), 1e-3);
}

// Overlap off: every bucket waits for the end of backward (240 us) and they run back to back:
// 240–292.087, 292.087–331.130, 331.130–366.913; optimizer 366.913–408.913 us.
TEST(Ddp, WithoutOverlapAllReducesRunAfterBackward) {
  const RunOutput out = run({"parallel.overlap=false"});
  const auto spans = all_reduces(out, 0);
  ASSERT_EQ(spans.size(), 3u);
  const double b0 = kBucketUs[0], b1 = kBucketUs[1], b2 = kBucketUs[2];
  const double expected[3][2] = {
      {240, 240 + b0}, {240 + b0, 240 + b0 + b1}, {240 + b0 + b1, 240 + b0 + b1 + b2}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(spans[k].first, expected[k][0] * kUs, kTol) << "bucket " << k;
    EXPECT_NEAR(spans[k].second, expected[k][1] * kUs, kTol) << "bucket " << k;
  }
  EXPECT_NEAR(out.result.iteration_time_s, (240 + b0 + b1 + b2 + kAdamUs) * kUs, kTol);
  EXPECT_NEAR(out.result.exposed_comm_s.dp, (b0 + b1 + b2) * kUs, kTol);
  EXPECT_NEAR(out.result.comm_overlap_fraction, 0.0, 1e-9);
}

// The flow model on a contention-free ring (one flow per GPU uplink and downlink) must give the
// same timeline as the analytical formula.
TEST(Ddp, FlowModelMatchesTheHandTimelineWithoutContention) {
  expect_overlapped_timeline(run({"simulation.network_model=flow"}));
}

// Gradient accumulation, m = 2 micro-batches (global batch 8 over 4 GPUs): PyTorch's no_sync()
// on the first, so all-reduces only follow the second backward. Compute: fwd mb0 0–80, bwd mb0
// 80–240, fwd mb1 240–320, bwd mb1 L3 320–340, L2 340–380, L1 380–400, L0 400–480. Buckets:
// 380–432.087, 432.087–471.130, 480–515.783; optimizer 515.783–557.783 us.
TEST(Ddp, GradientAccumulationReducesOnlyAfterTheLastMicroBatch) {
  const RunOutput out = run({"training.global_batch=8"});
  const auto spans = all_reduces(out, 0);
  ASSERT_EQ(spans.size(), 3u);  // one per bucket, not per micro-batch
  const double b0 = kBucketUs[0], b1 = kBucketUs[1], b2 = kBucketUs[2];
  const double expected[3][2] = {{380, 380 + b0}, {380 + b0, 380 + b0 + b1}, {480, 480 + b2}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(spans[k].first, expected[k][0] * kUs, kTol) << "bucket " << k;
    EXPECT_NEAR(spans[k].second, expected[k][1] * kUs, kTol) << "bucket " << k;
  }
  EXPECT_NEAR(out.result.iteration_time_s, (480 + b2 + kAdamUs) * kUs, kTol);
}

// Ideal network: communication is free, so nothing is exposed and the iteration is compute only:
// forward + backward 240 us + optimizer 42 us.
TEST(Ddp, IdealNetworkExposesNoCommunication) {
  const RunOutput out = run({"simulation.network_model=ideal"});
  EXPECT_NEAR(out.result.iteration_time_s, 282 * kUs, kTol);
  EXPECT_EQ(out.result.exposed_comm_s.total, 0.0);
}

}  // namespace
}  // namespace clustersim::models
