// Folding is exact or refused (issue 11; docs/performance.md "Folding"). For every shipped
// scenario under the analytical model, what `fold: auto` answers must be what the whole run
// answers, and a forced fold (`fold: dp`) must too wherever `auto` would fold. Asymmetric clusters
// (an oversubscribed fabric, fewer NICs than GPUs, PCIe nodes) are refused; imbalanced experts
// load every expert-parallel rank alike, so they fold and stay exact. Under the flow model `auto`
// folds with the network's check (every replica's traffic carried, each replica in step) or
// refuses mid-run and simulates every rank: either way the whole run's figures and link loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "models/plans/training_schedule.hpp"
#include "models/result_json.hpp"
#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR "/";

// Under the analytical model; or under `flow` without a trace (no op's start recorded, as
// `clustersim run`), where `auto` folds with the network's check.
RunOutput run(const std::string& file, const std::string& fold, std::vector<std::string> sets,
              const std::string& network = "analytical") {
  sets.push_back("simulation.fold=" + fold);
  RunOptions options;
  options.network = network;
  options.record_starts = network == "analytical";
  return run_scenario(load_scenario(kScenarios + file, sets), options);
}

RunOutput run_flow(const std::string& file, const std::string& fold,
                   const std::vector<std::string>& sets) {
  return run(file, fold, sets, "flow");
}

// The figures a user reads, compared within 1e-9 of the iteration time (or of the figure).
void expect_same_figures(const Result& f, const Result& w) {
  const double t = w.iteration_time_s;
  EXPECT_NEAR(f.iteration_time_s, t, 1e-9 * t);
  EXPECT_NEAR(f.tflops_per_gpu, w.tflops_per_gpu, 1e-9 * w.tflops_per_gpu);
  EXPECT_NEAR(f.mfu, w.mfu, 1e-9 * w.mfu);
  EXPECT_NEAR(f.bubble_fraction, w.bubble_fraction, 1e-9);
  EXPECT_NEAR(f.exposed_comm_s.dp, w.exposed_comm_s.dp, 1e-9 * t);
  EXPECT_NEAR(f.exposed_comm_s.tp, w.exposed_comm_s.tp, 1e-9 * t);
  EXPECT_NEAR(f.exposed_comm_s.pp, w.exposed_comm_s.pp, 1e-9 * t);
  EXPECT_NEAR(f.exposed_comm_s.ep, w.exposed_comm_s.ep, 1e-9 * t);
  EXPECT_NEAR(f.breakdown_s.idle, w.breakdown_s.idle, 1e-9 * t);
  EXPECT_EQ(f.memory.peak.total(), w.memory.peak.total());
}

std::vector<std::string> shipped() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kScenarios))
    if (e.path().extension() == ".yaml" && e.path().filename() != "llama3-405b-16384xh100.yaml")
      files.push_back(e.path().filename().string());  // the 16K one: EndToEnd folds it below
  std::sort(files.begin(), files.end());
  return files;
}

class EveryShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryShippedScenario, FoldsExactlyOrNotAtAll) {
  const std::string file = GetParam();
  const Scenario sc = load_scenario(kScenarios + file);
  // Contention decides under the flow model: it never folds by itself.
  EXPECT_FALSE(folds_data_parallel(sc, "flow"));
  if (!folds_data_parallel(sc, "analytical")) {
    // Refused (the run is then the whole run): replicas that may differ, or nothing to fold.
    EXPECT_TRUE(!replicas_provably_alike(sc) || sc.parallel.dp / std::max(1, sc.parallel.ep) < 2);
    return;
  }
  const RunOutput whole = run(file, "none", {});
  const RunOutput automatic = run(file, "auto", {});
  EXPECT_EQ(whole.built.folded_replicas, 1);
  EXPECT_EQ(automatic.built.folded_replicas, sc.parallel.dp / std::max(1, sc.parallel.ep));
  EXPECT_EQ(automatic.built.schedule.ops.size() *
                static_cast<std::size_t>(automatic.built.folded_replicas),
            whole.built.schedule.ops.size());
  expect_same_figures(automatic.result, whole.result);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.rfind('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Folding, EveryShippedScenario, ::testing::ValuesIn(shipped()), test_name);

// The shipped scenarios on one fabric switch, where `auto` folds: the folded figures are the
// whole run's.
TEST(Folding, ShippedScenariosOnOneSwitchFoldAndGiveTheWholeRunsFigures) {
  struct Case {
    const char* file;
    int replicas;
  };
  for (const Case& c :
       {Case{"llama2-7b-ddp-2xdgx-a100.yaml", 16}, Case{"gpt2-xl-bucket-study.yaml", 16},
        Case{"llama3-70b-fsdp-tp8-4xdgx-h100.yaml", 4}}) {
    SCOPED_TRACE(c.file);
    const std::vector<std::string> sets = {"cluster.network.topology=single-switch"};
    const RunOutput whole = run(c.file, "none", sets);
    const RunOutput folded = run(c.file, "auto", sets);
    EXPECT_EQ(folded.built.folded_replicas, c.replicas);
    expect_same_figures(folded.result, whole.result);
  }
}

// Clusters whose data-parallel replicas are not interchangeable: `auto` refuses to fold.
TEST(Folding, AsymmetricClustersAreNotFolded) {
  const std::string file = "llama2-7b-ddp-2xdgx-a100.yaml";
  const std::vector<std::vector<std::string>> asymmetric = {
      // An oversubscribed fat tree: which replicas share an uplink depends on the placement.
      {"cluster.network.topology=fat-tree", "cluster.network.oversubscription=4"},
      // 4 NICs for 8 GPUs: pairs of GPUs share a way out, each pair differently loaded.
      {"cluster.network.topology=single-switch", "cluster.network.nics_per_node=4"},
  };
  for (const auto& sets : asymmetric) {
    SCOPED_TRACE(sets.back());
    const Scenario sc = load_scenario(kScenarios + file, sets);
    EXPECT_FALSE(replicas_provably_alike(sc));
    EXPECT_FALSE(folds_data_parallel(sc, "analytical"));
    EXPECT_EQ(run(file, "auto", sets).built.folded_replicas, 1);
  }
  // PCIe nodes: GPUs sit at different distances from each other and from the NIC.
  const Scenario pcie = load_scenario(kScenarios + "resnet50-ddp-pcie-8gpu.yaml");
  EXPECT_FALSE(replicas_provably_alike(pcie));
  EXPECT_FALSE(folds_data_parallel(pcie, "analytical"));
}

// Imbalanced experts: the busiest expert's load is every expert-parallel rank's (moe.imbalance),
// the same in every replica, so two expert-data-parallel replicas fold exactly.
TEST(Folding, ImbalancedExpertsFoldExactly) {
  const std::string file = "deepseek-moe-16b-ep16-4xdgx-h100.yaml";
  const std::vector<std::string> sets = {"cluster.network.topology=single-switch",
                                         "model.moe.imbalance=1.5"};
  const RunOutput whole = run(file, "none", sets);
  const RunOutput folded = run(file, "auto", sets);
  const RunOutput balanced = run(file, "none", {"cluster.network.topology=single-switch"});
  EXPECT_EQ(folded.built.folded_replicas, 2);
  EXPECT_GT(whole.result.iteration_time_s, balanced.result.iteration_time_s);
  expect_same_figures(folded.result, whole.result);
}

// HSDP replicates across shard groups (a node each): a replica is a node, not a rank. Its 8 GPUs
// all-reduce their shards across nodes at once through the node's NICs (4 here, 2 GPUs each),
// so a fold keeps the whole node and, even on the flow model, gives the whole run's figures.
TEST(Folding, HsdpFoldsWholeShardGroupsAndKeepsTheirNicContention) {
  const std::string file = "llama2-7b-fsdp-2xdgx-a100.yaml";
  const std::vector<std::string> sets = {"parallel.data_parallel=hsdp",
                                         "cluster.network.topology=single-switch",
                                         "cluster.network.nics_per_node=4"};
  auto flow = [&](const std::string& fold) {
    std::vector<std::string> with = sets;
    with.push_back("simulation.fold=" + fold);
    RunOptions options;
    options.network = "flow";
    return run_scenario(load_scenario(kScenarios + file, with), options);
  };
  const RunOutput whole = flow("none");
  const RunOutput folded = flow("dp");
  EXPECT_EQ(folded.built.folded_replicas, 2);  // 16 GPUs, shard groups of 8
  EXPECT_GT(whole.result.exposed_comm_s.dp, 0);
  expect_same_figures(folded.result, whole.result);
}

bool has_note(const Result& r, const std::string& text) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// The result JSON but for the notes and the event count, which say how the run was made.
std::string figures_json(const Result& r) {
  auto j = result_to_json(r, true);
  j.erase("notes");
  j.erase("simulator");
  return j.dump();
}

// Every shipped scenario (the two largest with fewer micro-batches) under `flow`: `auto` folds with
// the check and its result is the whole run's, link loads included, to the last digit but for
// the FLOP rates (summed over fewer ranks, equal within 1e-9); or it has nothing to fold.
TEST_P(EveryShippedScenario, FoldsUnderTheFlowModelWithTheNetworksCheck) {
  const std::string file = GetParam();
  std::vector<std::string> sets;
  // Fewer micro-batches where a run takes seconds (minutes under the sanitizers).
  if (file == "gpt3-175b-1024xA100.yaml") sets = {"training.global_batch=64"};
  if (file == "llama3-70b-8xdgx-h100-interleaved.yaml") sets = {"training.global_batch=32"};
  const Scenario sc = load_scenario(kScenarios + file, sets);
  const int replicas = sc.parallel.dp / std::max(1, sc.parallel.ep);
  EXPECT_EQ(checks_folded_run(sc, "flow"), replicas > 1);
  EXPECT_FALSE(checks_folded_run(sc, "analytical"));  // folds_data_parallel decides there
  const RunOutput whole = run_flow(file, "none", sets);
  const RunOutput automatic = run_flow(file, "auto", sets);
  EXPECT_EQ(whole.built.folded_replicas, 1);
  if (replicas < 2) return;
  EXPECT_TRUE(automatic.built.replicas_checked);
  EXPECT_EQ(automatic.built.folded_replicas, replicas);
  EXPECT_TRUE(has_note(automatic.result, "the links carried every replica's traffic"));
  expect_same_figures(automatic.result, whole.result);
  Result a = automatic.result;
  a.tflops_per_gpu = whole.result.tflops_per_gpu;
  a.mfu = whole.result.mfu;
  EXPECT_EQ(figures_json(a), figures_json(whole.result));
  EXPECT_FALSE(whole.result.links.empty());
}

// GPT-3's replicas on leaves of 96 NICs: stage 0 of replica 0 sends to stage 1 inside one leaf
// (NICs 0-7 to 64-71) where replica 4's crosses to the next leaf (32-39 to 96-103) through the
// spine, a hop's latency more. The check finds the first such send out of step and the run is
// then every rank's: the whole run's figures, with a note naming the send.
TEST(Folding, UnderTheFlowModelReplicasOutOfStepAreRefusedMidRun) {
  const std::string file = "gpt3-175b-1024xA100.yaml";
  const std::vector<std::string> sets = {"training.global_batch=16",
                                         "cluster.network.nics_per_leaf=96"};
  const RunOutput whole = run_flow(file, "none", sets);
  const RunOutput automatic = run_flow(file, "auto", sets);
  EXPECT_EQ(automatic.built.folded_replicas, 1);
  EXPECT_FALSE(automatic.built.replicas_checked);
  EXPECT_TRUE(has_note(automatic.result, "do not keep step"));
  EXPECT_TRUE(has_note(automatic.result, "send act"));
  EXPECT_EQ(figures_json(automatic.result), figures_json(whole.result));
}

// The asymmetries the analytical fold refuses: under the flow model's check an oversubscribed
// fat tree, four NICs for eight GPUs and imbalanced experts fold, and give the whole run.
TEST(Folding, UnderTheFlowModelAsymmetricFabricsFoldOnlyWhereTheyKeepStep) {
  struct Case {
    const char* file;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"llama3-70b-fsdp-tp8-4xdgx-h100.yaml",
       {"cluster.network.oversubscription=3", "cluster.network.nics_per_leaf=12"}},
      {"llama2-7b-fsdp-2xdgx-a100.yaml",
       {"parallel.data_parallel=hsdp", "cluster.network.nics_per_node=4"}},
      {"deepseek-moe-16b-ep16-4xdgx-h100.yaml", {"model.moe.imbalance=1.5"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const RunOutput whole = run_flow(c.file, "none", c.sets);
    const RunOutput automatic = run_flow(c.file, "auto", c.sets);
    EXPECT_GT(automatic.built.folded_replicas, 1);
    expect_same_figures(automatic.result, whole.result);
    EXPECT_EQ(automatic.result.links.size(), whole.result.links.size());
  }
}

}  // namespace
}  // namespace clustersim::models
