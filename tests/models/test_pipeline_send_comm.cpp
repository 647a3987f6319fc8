// Which communicator a pipeline's sends are posted on (docs/parallelism.md "Which communicator a
// send runs on"): the pipeline group's where the framework batches them (Megatron's
// batch_isend_irecv, DualPipe), a communicator of the pair where it posts lone sends (Megatron's
// interleaved schedule with overlap_p2p_comm, DeepSpeed's pair groups), or as
// parallel.pp_send_communicator says.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::kNone;

// 4 GPUs, pp stages (dp = 4 / pp), 8 identical layers, `parallel` the keys after pp.
engine::Schedule built(int pp, const std::string& parallel) {
  const std::string text = R"(
cluster: {nodes: 1, gpus_per_node: 4, gpu: {peak_tflops: {bf16: 100, fp32: 10}, hbm_bandwidth: 1TB/s, memory: 80GB}}
model: {name: eight, layers: [{name: block, params: 1, forward_flops: 1e9, repeat: 8}]}
training: {global_batch: 8, micro_batch: 1, precision: bf16}
parallel: {pp: )" + std::to_string(pp) +
                           parallel + R"(}
simulation: {network_model: ideal}
)";
  return build_schedule(parse_scenario(text, "sends.yaml")).schedule;
}

// The ranks of the group a send from a to b is posted on; empty for the pair's own.
std::vector<engine::Rank> comm_of(const engine::Schedule& s, engine::Rank a, engine::Rank b) {
  const engine::GroupId g = s.send_group(a, b);
  return g == kNone ? std::vector<engine::Rank>{} : s.groups[g].ranks;
}

TEST(PipelineSendCommunicator, FrameworksPostTheirSendsWhereTheyDo) {
  const std::vector<engine::Rank> all{0, 1, 2, 3};
  // Megatron without virtual stages batches its sends (batch_p2p_comm): the pipeline group.
  for (const std::string schedule : {"gpipe", "1f1b", "zb-h1", "dualpipe"}) {
    const auto s = built(4, ", schedule: " + schedule);
    EXPECT_EQ(comm_of(s, 0, 1), all) << schedule;
    EXPECT_EQ(comm_of(s, 2, 1), all) << schedule;
    EXPECT_EQ(s.groups[s.send_group(0, 1)].name, "pp[0]") << schedule;
  }
  // The interleaved schedule overlaps them as lone isend / irecv: each pair's own communicator.
  EXPECT_TRUE(comm_of(built(4, ", schedule: interleaved, virtual_stages: 2"), 0, 1).empty());
  // Without overlap_p2p_comm it batches them (batch_isend_irecv): the pipeline group.
  EXPECT_EQ(
      comm_of(built(4, ", schedule: interleaved, virtual_stages: 2, pp_p2p_overlap: none"), 0, 1),
      all);
  // DeepSpeed's engine sends on a group of the two ranks.
  EXPECT_TRUE(comm_of(built(4, ", pipeline_engine: deepspeed"), 0, 1).empty());
  // Stated, either way.
  EXPECT_TRUE(comm_of(built(4, ", pp_send_communicator: pair"), 0, 1).empty());
  EXPECT_EQ(
      comm_of(built(4, ", schedule: interleaved, virtual_stages: 2, pp_send_communicator: group"),
              3, 0),
      all);
  // pp 2 × dp 2 (dp varies faster): pipelines {0, 2} and {1, 3}, each its own communicator;
  // ranks of different pipelines share none.
  const auto s = built(2, "");
  EXPECT_EQ(comm_of(s, 0, 2), (std::vector<engine::Rank>{0, 2}));
  EXPECT_EQ(comm_of(s, 3, 1), (std::vector<engine::Rank>{1, 3}));
  EXPECT_TRUE(comm_of(s, 0, 3).empty());
  // One stage: no pipeline, no send communicator.
  EXPECT_TRUE(built(1, "").send_comm.empty());
}

// What a run records for a send: the channels NCCL gives it at its size, which the trace shows and
// which are the SMs it holds beside compute. 4 stages on a node of 4 GPUs at 100 GB/s NVLink (8
// p2p channels), 412 kB activations: on the pipeline group's communicator nChannelsMin 8 / 4 = 2,
// so 2 channels; on a pair's, 8 / 2 = 4 (tests/models/test_collective_notes.cpp works the same
// figures into its notes).
TEST(PipelineSendCommunicator, ARunRecordsTheChannelsASendTookAtItsSize) {
  for (const auto& [parallel, channels] :
       {std::pair{std::string(""), 2u},
        std::pair{std::string(", pp_send_communicator: pair"), 4u}}) {
    const std::string text = R"(
cluster:
  nodes: 1
  gpus_per_node: 4
  gpu: {peak_tflops: {bf16: 100, fp32: 10}, hbm_bandwidth: 1TB/s, memory: 80GB}
  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}
model: {name: four, layers: [{name: block, params: 1, forward_flops: 1e9, activation_bytes: 412KB, repeat: 4}]}
training: {global_batch: 4, micro_batch: 1, precision: bf16}
parallel: {pp: 4)" + parallel +
                             R"(}
simulation: {link_efficiency: {nvlink: 1}}
)";
    const RunOutput out = run_scenario(parse_scenario(text, "sends.yaml"));
    const engine::Schedule& s = out.built.schedule;
    std::size_t sends = 0;
    for (engine::OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].kind == engine::OpKind::send || s.ops[id].kind == engine::OpKind::recv) {
        ++sends;
        EXPECT_EQ(out.timeline.channels[id], channels) << parallel << " " << s.label(s.ops[id]);
      }
    EXPECT_EQ(sends, 2u * 3u * 2u * 4u) << parallel;  // 3 boundaries, 2 ways, 4 mbs, send + recv
  }
}

TEST(PipelineSendCommunicator, AnUnknownChoiceIsRefusedNamingTheKey) {
  std::string text = uniform_pipeline_scenario("1f1b", 2, 4, 1);
  text.insert(text.find("virtual_stages"), "pp_send_communicator: batched, ");
  expect_plan_error(text, "bad.yaml", "parallel.pp_send_communicator",
                    "allowed: auto | pair | group");
}

// A rank posts its sends on one group at most (engine::ScheduleBuilder::post_sends_on).
TEST(PipelineSendCommunicator, ARankPostsItsSendsOnOneGroupAtMost) {
  engine::ScheduleBuilder b(4);
  b.post_sends_on(b.add_group({0, 1}, "pp[0]"));
  b.post_sends_on(b.add_group({2, 3}, "pp[1]"));
  try {
    b.post_sends_on(b.add_group({1, 2}, "other"));
    ADD_FAILURE() << "a rank on two send communicators";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 posts its sends on 'pp[0]' and on 'other'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(b.post_sends_on(7), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::models
