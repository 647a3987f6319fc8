// PyTorch DDP's find_unused_parameters, static_graph and Join (docs/parallelism.md "DDP"): the
// extra all-reduces each adds, their bytes counted by hand, and where they sit in the timeline.
#include <gtest/gtest.h>

#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::OpId;

// 2 Llama-shaped blocks on one DGX H100, dp 8, 2 micro-batches a rank. Parameter tensors of a
// rank, in the model's registration: the word embedding (1); per block the attention's norm,
// QKV and output projection (3) and the MLP's norm, gate, up and down (4); the final norm and
// the untied head (2): 1 + 2·7 + 2 = 17, so the used-parameter map is 17 int32 = 68 bytes.
constexpr std::uint64_t kUsedMapBytes = 17 * 4;

std::string llama(const std::string& parallel) {
  return "name: ddp\n"
         "cluster: {nodes: 1, node: dgx-h100}\n"
         "model: {num_layers: 2, hidden_size: 1024, num_heads: 8, ffn_hidden_size: 2816, "
         "vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false, "
         "learned_positions: false}\n"
         "training: {global_batch: 16, micro_batch: 1, seq_len: 1024, precision: bf16}\n"
         "parallel: {data_parallel: ddp" +
         parallel +
         "}\n"
         "simulation: {network_model: analytical}\n";
}

OpId find(const engine::Schedule& s, const std::string& label) {
  for (OpId id = 0; id < s.ops.size(); ++id)
    if (s.ops[id].rank == 0 && s.label(s.ops[id]) == label) return id;
  return engine::kNone;
}

// Rank 0's last bucket all-reduce: the comm-stream op issued last before the step.
OpId last_bucket(const engine::Schedule& s) {
  OpId last = engine::kNone;
  for (OpId id = 0; id < s.ops.size() && s.ops[id].rank == 0; ++id)
    if (s.label(s.ops[id]).starts_with("ddp bucket")) last = id;
  return last;
}

TEST(DdpOptions, FindUnusedParametersAllReducesTheUsedMapAfterTheLastBucket) {
  const auto run = run_scenario(parse_scenario(llama(", find_unused_parameters: true"), "d.yaml"));
  const auto& s = run.built.schedule;
  const auto& tl = run.timeline;
  const OpId map = find(s, "ddp unused-parameter map all_reduce");
  ASSERT_NE(map, engine::kNone);
  EXPECT_EQ(s.ops[map].bytes, kUsedMapBytes);
  EXPECT_EQ(s.stream_names[s.ops[map].stream], "comm");
  const OpId bucket = last_bucket(s);
  ASSERT_NE(bucket, engine::kNone);
  EXPECT_GE(tl.start[map], tl.end[bucket]);  // behind the last bucket on the comm stream
  const OpId step = find(s, "optimizer step");
  ASSERT_NE(step, engine::kNone);
  EXPECT_GE(tl.start[step], tl.end[map]);

  // static_graph drops it; so does leaving find_unused_parameters off.
  for (const char* other : {", find_unused_parameters: true, static_graph: true", ""}) {
    const auto built = build_schedule(parse_scenario(llama(other), "d.yaml"));
    EXPECT_EQ(find(built.schedule, "ddp unused-parameter map all_reduce"), engine::kNone) << other;
  }
}

// Join: one 4-byte all-reduce a rank per iteration, issued with the last micro-batch's forward
// (micro-batch 1 of 0..1) and waited for by the step; nothing with join off.
TEST(DdpOptions, JoinNotifiesOncePerIterationAtTheSynchronizingForward) {
  const auto run = run_scenario(parse_scenario(llama(", join: true"), "d.yaml"));
  const auto& s = run.built.schedule;
  const auto& tl = run.timeline;
  int notifies = 0;
  for (const auto& op : s.ops)
    if (op.rank == 0 && s.label(op).starts_with("ddp join notify")) ++notifies;
  EXPECT_EQ(notifies, 1);
  const OpId notify = find(s, "ddp join notify all_reduce mb1");
  ASSERT_NE(notify, engine::kNone);
  EXPECT_EQ(s.ops[notify].bytes, 4u);
  const OpId first_forward = find(s, "embedding fwd mb1");
  ASSERT_NE(first_forward, engine::kNone);
  EXPECT_EQ(tl.launch[notify], tl.launch[first_forward]);
  EXPECT_GE(tl.start[find(s, "optimizer step")], tl.end[notify]);
  EXPECT_EQ(find(build_schedule(parse_scenario(llama(""), "d.yaml")).schedule,
                 "ddp join notify all_reduce mb1"),
            engine::kNone);
}

TEST(DdpOptions, OnlyDdpTakesThem) {
  for (const char* key : {"find_unused_parameters", "static_graph", "join"}) {
    std::string text = llama(std::string(", ") + key + ": true");
    text.replace(text.find("data_parallel: ddp"), 18, "data_parallel: zero1");
    try {
      parse_scenario(text, "bad.yaml");
      ADD_FAILURE() << key << " accepted with zero1";
    } catch (const ScenarioError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("parallel.") + key), std::string::npos) << message;
      EXPECT_NE(message.find("zero1"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace clustersim::models
