// Whole scenarios through models::run_scenario: the network models agree where they must
// (DESIGN.md "Network models"): `analytical` and `flow` differ only by contention, so on a
// contention-free scenario they agree within 2 %; `ideal` makes communication free.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR "/";

Result run_with(const std::string& file, engine::NetworkModelKind kind) {
  RunOptions options;
  options.network = kind;
  return run_scenario(load_scenario(kScenarios + file), options).result;
}

// ResNet-50 DDP on one DGX A100: the all-reduces run one at a time on the comm stream and a ring
// over an NVSwitch puts one flow on each GPU's uplink and downlink, so nothing contends.
TEST(EndToEnd, AnalyticalAndFlowAgreeWithoutContention) {
  for (const char* file : {"resnet50-ddp-dgx-a100.yaml", "resnet50-ddp-pcie-8gpu.yaml"}) {
    SCOPED_TRACE(file);
    const Result a = run_with(file, engine::NetworkModelKind::analytical);
    const Result f = run_with(file, engine::NetworkModelKind::flow);
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
  const Result ideal = run_with(file, engine::NetworkModelKind::ideal);
  const Result flow = run_with(file, engine::NetworkModelKind::flow);
  EXPECT_EQ(ideal.exposed_comm_s.total, 0.0);
  EXPECT_EQ(ideal.exposed_comm_s.dp, 0.0);
  EXPECT_EQ(ideal.breakdown_s.idle, 0.0);
  EXPECT_GT(flow.exposed_comm_s.total, 0.0);  // 32 GPUs over 200 Gb/s NICs cannot hide it all
  EXPECT_LE(ideal.iteration_time_s, flow.iteration_time_s);
}

}  // namespace
}  // namespace clustersim::models
