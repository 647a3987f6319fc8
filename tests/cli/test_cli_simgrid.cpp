// `clustersim run --network simgrid` end to end: one process per run, as SimGrid needs.
#include <gtest/gtest.h>

#ifdef CLUSTERSIM_HAVE_SIMGRID

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

using json = nlohmann::json;

const std::string kResnet = kScenarios + "/resnet50-ddp-dgx-a100.yaml";

json run_json(const TempDir& dir, const std::string& network, const std::string& name) {
  const auto path = (dir / name).string();
  const Outcome o =
      run_cli({"run", kResnet, "--network", network, "--reproducible", "--json", path}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  return json::parse(read_file(path));
}

TEST(CliSimgrid, RunsAScenarioDeterministicallyAndAgreesWithFlow) {
  // ResNet-50 DDP on one DGX A100: 25 MB bucket all-reduces over NVSwitch, uncontended, where the
  // two models must agree (docs/network.md "SimGrid model"); the same run twice is the same JSON.
  const TempDir dir;
  const json a = run_json(dir, "simgrid", "a.json");
  const json b = run_json(dir, "simgrid", "b.json");
  const json flow = run_json(dir, "flow", "flow.json");
  EXPECT_EQ(a["network_model"], "simgrid");
  EXPECT_EQ(a.dump(), b.dump());
  const double t = a["iteration_time_s"].get<double>();
  const double want = flow["iteration_time_s"].get<double>();
  EXPECT_NEAR(t, want, 0.03 * want);
}

TEST(CliSimgrid, ABadSimgridKeyIsBadInput) {
  const TempDir dir;
  const Outcome o = run_cli(
      {"run", kResnet, "--set", "simulation.simgrid.model=NS3", "--network", "simgrid"}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("simulation.simgrid.model"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace clustersim::cli::testing

#endif  // CLUSTERSIM_HAVE_SIMGRID
