// Stamping data-parallel replicas (models/plans/replica_stamp.hpp) is a construction shortcut:
// for every shipped scenario (but the two largest) and for plans that exercise what a replica's
// ops depend on (several iterations, a rank order with dp fastest, context parallelism, HSDP,
// offload, DDP's join, sequence parallelism with overlapped TP), the schedule built with stamping
// equals the one built rank by rank: every op field for field, every dependency, every group's
// ranks and name, and the names, streams and kernel lists. HSDP stamps shard groups: the shipped
// HSDP validation cases unfolded, shard groups smaller than a node, tp, cp and ep beside HSDP,
// several iterations and micro-batches; and layouts it must refuse (built rank by rank). The
// metrics, which read a stamped run's FLOPs once per range of records it copies, give the
// figures of the schedule built rank by rank. Ranks of tp index > 0 are stamped from index 0 in
// every case with tp > 1, and in a folded schedule too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kStampScenarios = CLUSTERSIM_SCENARIOS_DIR "/";
const std::string kStampValidation = "../validation/training/";

void expect_same_ops(const engine::Schedule& a, const engine::Schedule& b) {
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const engine::Op& x = a.ops[i];
    const engine::Op& y = b.ops[i];
    const bool same = a.flops(x) == b.flops(y) && x.bytes == y.bytes && x.rank == y.rank &&
                      x.deps_begin == y.deps_begin && x.deps_count == y.deps_count &&
                      x.name == y.name && x.microbatch() == y.microbatch() &&
                      x.group_or_peer == y.group_or_peer && x.tag() == y.tag() &&
                      x.chunk() == y.chunk() && x.stream == y.stream && x.kind == y.kind &&
                      x.category == y.category && x.collective == y.collective &&
                      x.algorithm == y.algorithm && x.precision() == y.precision();
    ASSERT_TRUE(same) << "op " << i << " (rank " << y.rank << ", " << b.label(y) << ")";
  }
}

void expect_same_schedule(const BuiltSchedule& stamped, const BuiltSchedule& built) {
  const engine::Schedule& a = stamped.schedule;
  const engine::Schedule& b = built.schedule;
  EXPECT_EQ(a.num_ranks, b.num_ranks);
  expect_same_ops(a, b);
  EXPECT_EQ(a.deps, b.deps);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    EXPECT_EQ(a.groups[g].ranks, b.groups[g].ranks) << "group " << g;
    EXPECT_EQ(a.groups[g].name, b.groups[g].name) << "group " << g;
  }
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.stream_names, b.stream_names);
  EXPECT_EQ(a.kernels.size(), b.kernels.size());
  EXPECT_EQ(a.mirror, b.mirror);
  EXPECT_EQ(stamped.buckets.size(), built.buckets.size());
  EXPECT_EQ(built.stamped_ranks, 0u);
}

struct StampCase {
  std::string file;
  std::vector<std::string> sets;
  // HSDP: the shard groups per dp group (worked out by hand from the layout), each stamped from
  // the first; 1 where the layout cannot be stamped and is built rank by rank.
  int hsdp_shard_groups = 0;
};

void PrintTo(const StampCase& c, std::ostream* os) {
  *os << c.file;
  for (const auto& s : c.sets)
    *os << " --set " << s;
}

std::vector<StampCase> stamp_cases() {
  // The interleaved Llama 3 70B plan with 16 micro-batches a replica instead of 128: the same
  // warm-up, steady state and cool-down of its 4 stages × 5 chunks, an eighth of the ops (each
  // of its four cases took 1 – 2 minutes under the sanitizers in CI).
  const std::string interleaved = "llama3-70b-8xdgx-h100-interleaved.yaml";
  const std::string fewer_micro_batches = "training.global_batch=32";
  std::vector<StampCase> out;
  for (const auto& e : std::filesystem::directory_iterator(kStampScenarios)) {
    const std::string name = e.path().filename().string();
    // The two largest (15 M and 26.6 M ops) take seconds and gigabytes to build twice.
    if (e.path().extension() == ".yaml" && name != "llama3-405b-16384xh100.yaml" &&
        name != "gpt3-175b-1024xA100.yaml")
      out.push_back({name, name == interleaved ? std::vector<std::string>{fewer_micro_batches}
                                               : std::vector<std::string>{}});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.file < y.file; });
  const std::string ddp = "llama2-7b-ddp-2xdgx-a100.yaml";
  const std::string fsdp = "llama2-7b-fsdp-2xdgx-a100.yaml";
  out.push_back({interleaved, {fewer_micro_batches, "simulation.iterations=2"}});
  out.push_back({"llama3-70b-fsdp-tp8-4xdgx-h100.yaml", {"parallel.order=[dp, tp, ep, pp]"}});
  out.push_back({"llama3-70b-fsdp-tp8-4xdgx-h100.yaml", {"simulation.iterations=2"}});
  out.push_back({ddp, {"parallel.cp=2"}});
  out.push_back({ddp, {"parallel.join=true"}});
  out.push_back({ddp, {"parallel.offload.optimizer=true", "parallel.data_parallel=zero2"}});
  out.push_back(
      {ddp, {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.tp_comm_overlap=true"}});
  // HSDP: shard groups are stamped from the first. 16 GPUs, a shard group per node: 2.
  const std::string hsdp = "parallel.data_parallel=hsdp";
  out.push_back({fsdp, {hsdp}, 2});
  out.push_back({fsdp, {hsdp, "simulation.iterations=2"}, 2});
  out.push_back({fsdp, {hsdp, "parallel.fsdp.shard_group=4"}, 4});  // two per node
  out.push_back({fsdp, {hsdp, "parallel.tp=2"}, 2});                // dp 8, 4 per node
  out.push_back({fsdp, {hsdp, "parallel.cp=2"}, 2});                // dp 8 × cp 2, a node each
  // dp varies fastest: dp groups are ranks 0-7 and 8-15, in shard groups of 4.
  out.push_back(
      {fsdp,
       {hsdp, "parallel.tp=2", "parallel.order=[dp, tp, ep, pp]", "parallel.fsdp.shard_group=4"},
       2});
  // Pipelines: 2 stages of 8 ranks, one per node, in shard groups of 4; tp 8 × dp 4 on 4 nodes
  // and interleaved tp 8 × pp 4 × dp 2 on 8, a node holding one member of a dp group.
  out.push_back({fsdp, {hsdp, "parallel.pp=2", "parallel.fsdp.shard_group=4"}, 2});
  // Zero bubble with sharded parameters: units gathered before B, reduced after W.
  out.push_back({fsdp, {"parallel.pp=2", "parallel.schedule=zb-h1"}});
  out.push_back(
      {fsdp, {hsdp, "parallel.pp=2", "parallel.schedule=zb-h2", "parallel.fsdp.shard_group=4"}, 2});
  out.push_back({"llama3-70b-fsdp-tp8-4xdgx-h100.yaml", {hsdp}, 4});
  out.push_back({interleaved, {fewer_micro_batches, hsdp}, 2});
  // 2 nodes of Mixtral, ep 8: a node's shard group holds all 8 expert ranks of one dp index.
  const std::string mixtral = "mixtral-8x7b-ep8-dgx-h100.yaml";
  out.push_back({mixtral, {"cluster.nodes=2", hsdp}, 2});
  // ep 2: the experts' shard group is a node's 4 ranks of one ep index, their replica the same
  // position on the other node.
  out.push_back({mixtral, {"cluster.nodes=2", hsdp, "parallel.ep=2"}, 2});
  // Refused: a shard group of 4 splits the 8 expert ranks of a dp index; one of 1 splits cp.
  out.push_back({mixtral, {"cluster.nodes=2", hsdp, "parallel.fsdp.shard_group=4"}, 1});
  out.push_back({fsdp, {hsdp, "parallel.cp=2", "parallel.fsdp.shard_group=1"}, 1});
  // Refused: cp varies slowest, so a node's shard group is a cp half; the first one's ranks
  // hold another cp coordinate than the second's.
  out.push_back({fsdp, {hsdp, "parallel.cp=2", "parallel.order=[tp, ep, dp, pp, cp]"}, 1});
  // The shipped HSDP validation cases (16 nodes, a shard group of 8 GPUs each, the root unit kept
  // gathered) unfolded: global batch 256 is one micro-batch of 2 per rank, 1024 four.
  for (const char* size : {"7b", "13b"}) {
    const std::string file = kStampValidation + "fms-fsdp-llama2-" + size + "-128xa100.yaml";
    out.push_back({file, {"simulation.fold=none"}, 16});
    out.push_back({file, {"simulation.fold=none", "training.global_batch=1024"}, 16});
  }
  out.push_back({fsdp, {"parallel.offload.activations=true"}});
  out.push_back({"mixtral-8x7b-ep8-dgx-h100.yaml", {"parallel.ep=4"}});
  // DeepSpeed's pipeline engine: blocking sends, tensor-parallel gathers and the tied embedding's
  // all-reduce between a replica's first and last stage (a group of two of its own ranks).
  out.push_back({interleaved,
                 {fewer_micro_batches, "parallel.schedule=1f1b", "parallel.virtual_stages=1",
                  "parallel.pipeline_engine=deepspeed", "parallel.overlap=false",
                  "model.tied_embeddings=true", "simulation.iterations=2"}});
  return out;
}

class StampedSchedule : public ::testing::TestWithParam<StampCase> {};

TEST_P(StampedSchedule, EqualsTheScheduleBuiltRankByRank) {
  const Scenario sc = load_scenario(kStampScenarios + GetParam().file, GetParam().sets);
  const BuiltSchedule built = build_schedule(sc, false, {}, /*stamp_replicas=*/false);
  const BuiltSchedule stamped = build_schedule(sc, false, {}, /*stamp_replicas=*/true);
  expect_same_schedule(stamped, built);
  // Every rank outside the first replica is stamped, each iteration: replicas are the dp / ep
  // indices, HSDP's the shard groups.
  const bool hsdp = sc.parallel.data_parallel == DataParallel::hsdp;
  ASSERT_EQ(hsdp, GetParam().hsdp_shard_groups > 0) << "an HSDP case names its shard groups";
  const auto replicas = static_cast<std::size_t>(hsdp ? GetParam().hsdp_shard_groups
                                                      : sc.parallel.dp / sc.parallel.ep);
  // Within each, the ranks of tp index > 0 are stamped from index 0's.
  const auto copies = replicas * static_cast<std::size_t>(sc.parallel.tp);
  const auto world = static_cast<std::size_t>(sc.world_size());
  const auto iterations = static_cast<std::size_t>(sc.simulation.iterations);
  EXPECT_EQ(stamped.stamped_ranks, iterations * (world - world / copies));
  // Every copy issues as many ops as its source, and only the sources' are held as records.
  EXPECT_EQ(stamped.schedule.ops.records() * copies, stamped.schedule.ops.size());
  EXPECT_EQ(built.schedule.ops.records(), built.schedule.ops.size());
}

INSTANTIATE_TEST_SUITE_P(ShippedAndVaried, StampedSchedule, ::testing::ValuesIn(stamp_cases()));

// Folded schedules have no replicas left to stamp: the same schedule either way.
TEST(StampedSchedule, AFoldedScheduleStampsNothing) {
  const Scenario sc = load_scenario(kStampScenarios + "llama2-7b-ddp-2xdgx-a100.yaml");
  const BuiltSchedule built = build_schedule(sc, true, {}, false);
  const BuiltSchedule stamped = build_schedule(sc, true, {}, true);
  expect_same_schedule(stamped, built);
  EXPECT_EQ(stamped.stamped_ranks, 0u);
}

// But its tensor-parallel ranks: GPT-3 175B folded (TP 8 · PP 16, one of 8 replicas, 128
// simulated ranks) holds the records of its 16 tp-0 ranks, and equals the folded schedule built
// rank by rank.
TEST(StampedSchedule, AFoldedScheduleStampsItsTensorParallelRanks) {
  const Scenario sc =
      load_scenario(kStampScenarios + "gpt3-175b-1024xA100.yaml", {"training.global_batch=16"});
  const BuiltSchedule built = build_schedule(sc, true, {}, false);
  const BuiltSchedule stamped = build_schedule(sc, true, {}, true);
  ASSERT_EQ(stamped.folded_replicas, 8);
  expect_same_schedule(stamped, built);
  EXPECT_EQ(stamped.stamped_ranks, 128u - 16u);
  EXPECT_EQ(stamped.schedule.ops.records() * 8, stamped.schedule.ops.size());
}

// The metrics sum a stamped run's FLOPs once per range of records it copies and take its
// ranks' last ends from its ends alone (models/metrics.cpp): on the same timeline, the figures
// equal those of the schedule built rank by rank, whose ops are all records read one by one.
// Several iterations (a replica stamped per iteration), HSDP's shard groups, and routed experts
// whose FLOPs the metrics scale (imbalance 1.2 on 2 nodes: two expert replicas).
TEST(StampedSchedule, MetricsEqualThoseOfTheScheduleBuiltRankByRank) {
  const std::vector<StampCase> cases = {
      {"llama2-7b-ddp-2xdgx-a100.yaml", {"simulation.iterations=2"}},
      {"llama2-7b-fsdp-2xdgx-a100.yaml", {"parallel.data_parallel=hsdp"}},
      {"mixtral-8x7b-ep8-dgx-h100.yaml", {"cluster.nodes=2"}},
  };
  for (const StampCase& c : cases) {
    SCOPED_TRACE(c.file);
    std::vector<std::string> sets = c.sets;
    sets.push_back("simulation.fold=none");
    const Scenario sc = load_scenario(kStampScenarios + c.file, sets);
    const RunOutput run = run_scenario(sc);
    ASSERT_GT(run.built.stamped_ranks, 0u);
    const BuiltSchedule built = build_schedule(sc, false, {}, /*stamp_replicas=*/false);
    const Result whole = compute_metrics(sc, built, run.timeline, run.topology, 10, {});
    EXPECT_EQ(run.result.critical_rank, whole.critical_rank);
    EXPECT_GT(whole.tflops_per_gpu, 0.0);
    EXPECT_NEAR(run.result.tflops_per_gpu, whole.tflops_per_gpu, 1e-12 * whole.tflops_per_gpu);
    EXPECT_NEAR(run.result.mfu, whole.mfu, 1e-12 * whole.mfu);
    EXPECT_EQ(run.result.breakdown_s.compute, whole.breakdown_s.compute);
    EXPECT_EQ(run.result.breakdown_s.idle, whole.breakdown_s.idle);
    EXPECT_EQ(run.result.memory.peak_rank, whole.memory.peak_rank);
    // Replicas end alike, so the critical rank is replica 0's; the last rank (a stamped
    // replica's) becomes it when its last op is made to end 1 ms after everything else.
    engine::Timeline late = run.timeline;
    const auto last_rank = static_cast<engine::Rank>(sc.world_size() - 1);
    engine::OpId last_op = 0;
    for (engine::OpId id = 0; id < late.end.size(); ++id)
      if (run.built.schedule.ops[id].rank == last_rank) last_op = id;
    late.makespan = late.makespan + engine::Time::from_seconds(1e-3);
    late.end[last_op] = late.makespan;
    EXPECT_EQ(compute_metrics(sc, run.built, late, run.topology, 10, {}).critical_rank, last_rank);
    EXPECT_EQ(compute_metrics(sc, built, late, run.topology, 10, {}).critical_rank, last_rank);
  }
}

}  // namespace
}  // namespace clustersim::models
