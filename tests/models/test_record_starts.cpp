// A run that does not record each op's start (RunRequest::record_starts false, as `clustersim
// run` without --trace) predicts the same: its result JSON is byte for byte the one of a run
// that records them, and so is every other field of its timeline (every rank simulated in both). A
// trace needs the starts: it is refused, not written, without them.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "models/frontend.hpp"
#include "models/result_json.hpp"

namespace clustersim::models {
namespace {

Prediction predict_recording_starts(const std::string& scenario, bool record_starts) {
  RunRequest request;
  request.scenario = std::string(CLUSTERSIM_SCENARIOS_DIR "/") + scenario;
  request.record_starts = record_starts;
  // Without starts, `fold: auto` may fold a flow run with the network's check (test_folding.cpp):
  // every rank here, so that the two timelines hold the same ops.
  request.overrides = {"simulation.fold=none"};
  return predict(request);
}

// `waits`: whether some communication op of the scenario waits for its peers; `host_copies`
// gets how many host copies it has.
void expect_same_without_starts(const std::string& scenario, bool waits, std::size_t& host_copies) {
  SCOPED_TRACE(scenario);
  const Prediction with = predict_recording_starts(scenario, true);
  const Prediction without = predict_recording_starts(scenario, false);
  const engine::Timeline& a = with.output.timeline;
  const engine::Timeline& b = without.output.timeline;
  const std::size_t n = with.output.built.schedule.ops.size();
  ASSERT_GT(n, 0u);
  EXPECT_EQ(a.start.size(), n);
  EXPECT_TRUE(b.start.empty());
  EXPECT_EQ(a.launch, b.launch);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.protocol, b.protocol);
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(result_to_json(with.output.result, true).dump(),
            result_to_json(without.output.result, true).dump());
  // The recorded starts: a GPU op or a host copy begins its work when it starts, a collective
  // or send/recv waits on its stream from its start until its last peer arrives.
  const engine::Schedule& s = with.output.built.schedule;
  std::size_t waited = 0;
  host_copies = 0;
  for (engine::OpId id = 0; id < n; ++id) {
    const engine::Op& op = s.ops[id];
    const bool own_instance = op.kind == engine::OpKind::compute || op.kind == engine::OpKind::copy;
    host_copies += engine::is_host_copy(op) ? 1 : 0;
    if (own_instance) {
      ASSERT_EQ(a.start[id], a.launch[id]) << s.label(op);
    } else {
      ASSERT_LE(a.start[id], a.launch[id]) << s.label(op);
      waited += a.start[id] < a.launch[id] ? 1 : 0;
    }
    ASSERT_LE(a.launch[id], a.end[id]) << s.label(op);
  }
  EXPECT_EQ(waited > 0, waits);  // a member that arrived before its peers waited
}

// One GPU, optimizer states offloaded: host copies, nothing to wait for.
TEST(RecordStarts, ARunWithoutStartsPredictsTheSameWithHostCopies) {
  std::size_t host_copies = 0;
  expect_same_without_starts("llama2-7b-zero-offload-workstation.yaml", false, host_copies);
  EXPECT_GT(host_copies, 0u);
}

// Four pipeline stages over PCIe: a stage's receive waits for its neighbour's send.
TEST(RecordStarts, ARunWithoutStartsPredictsTheSameWithPipelineWaits) {
  std::size_t host_copies = 0;
  expect_same_without_starts("llama2-7b-pcie-pp4.yaml", true, host_copies);
}

TEST(RecordStarts, ATraceOfARunWithoutStartsIsRefusedAndNotWritten) {
  const Prediction p = predict_recording_starts("llama2-7b-pcie-pp4.yaml", false);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "clustersim_test_record_starts_trace.json";
  std::filesystem::remove(path);
  EXPECT_THROW(write_trace(p, path.string()), std::logic_error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace clustersim::models
