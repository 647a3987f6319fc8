// The `clustersim` command as users meet it (DESIGN.md "Commands"): exit codes (0 success, 2 bad
// input), error messages that name file, line and key, --set, --network, output safety (never
// overwrite the scenario, atomic writes), --version, --help and `presets`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

using nlohmann::json;

const std::string kResnet = kScenarios + "/resnet50-ddp-dgx-a100.yaml";

// A small valid scenario: 2 GPUs, a two-layer model, runs in milliseconds.
const std::string kTiny = R"(name: tiny
cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2}
model:
  layers:
    - {name: a, params: 1e6, forward_flops: 1e9}
    - {name: b, params: 1e6, forward_flops: 1e9}
training: {global_batch: 8, micro_batch: 4}
)";

TEST(Cli, MalformedScenarioExitsWithTwoNamingFileLineAndKey) {
  const TempDir dir;
  // `tpp` is on line 8, right after the 7 lines of kTiny.
  const auto file = dir.write("bad.yaml", kTiny + "parallel: {tpp: 2}\n");
  const Outcome o = run_cli({"run", file.string()}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find(file.string() + ":8:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("parallel.tpp"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("did you mean 'tp'"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(Cli, ImpossiblePlanExitsWithTwo) {
  const TempDir dir;
  // 3 does not divide the 2 GPUs (docs/scenario.md "Validation": tp divides world).
  const auto file = dir.write("plan.yaml", kTiny + "parallel: {pp: 3}\n");
  const Outcome o = run_cli({"run", file.string()}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("parallel.pp"), std::string::npos) << o.err;
}

TEST(Cli, MissingScenarioFileExitsWithTwo) {
  const TempDir dir;
  const Outcome o = run_cli({"run", (dir / "nope.yaml").string()}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("nope.yaml"), std::string::npos) << o.err;
}

TEST(Cli, UnknownFlagAndUnknownNetworkExitWithTwo) {
  const TempDir dir;
  EXPECT_EQ(run_cli({"run", kResnet, "--frobnicate"}, dir).code, 2);
  EXPECT_EQ(run_cli({"run", kResnet, "--network", "telepathy"}, dir).code, 2);
  EXPECT_EQ(run_cli({}, dir).code, 2);  // a subcommand is required
}

TEST(Cli, SetOverridesAKeyAndItsErrorsCiteTheFlag) {
  const TempDir dir;
  const auto scenario = dir.write("tiny.yaml", kTiny);
  const auto json_path = (dir / "r.json").string();
  Outcome o = run_cli({"run", scenario.string(), "--set", "name=renamed", "--set",
                       "training.global_batch=16", "--json", json_path},
                      dir);
  ASSERT_EQ(o.code, 0) << o.err;
  const json j = json::parse(read_file(json_path));
  EXPECT_EQ(j["scenario"], "renamed");
  // samples/s × iteration time is the global batch, so the override reached the schedule.
  EXPECT_NEAR(j["samples_per_s"].get<double>() * j["iteration_time_s"].get<double>(), 16.0, 1e-9);

  o = run_cli({"run", scenario.string(), "--set", "parallel.tp=abc"}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--set parallel.tp=abc"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("parallel.tp"), std::string::npos) << o.err;
}

TEST(Cli, IdealNetworkExposesNoCommunication) {
  const TempDir dir;
  const auto json_path = (dir / "r.json").string();
  const Outcome o = run_cli({"run", kResnet, "--network", "ideal", "--json", json_path}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  const json j = json::parse(read_file(json_path));
  EXPECT_EQ(j["network_model"], "ideal");
  EXPECT_EQ(j["exposed_comm_s"]["total"], 0.0);  // communication takes zero time
  EXPECT_EQ(j["breakdown_s"]["dp_comm"], 0.0);
}

// --timings: every phase the run reports, in the order it runs them, each a wall time that the
// whole process's wall time bounds; without the flag no such line.
TEST(Cli, TimingsListTheRunsPhasesInOrderWithinItsWallTime) {
  const TempDir dir;
  const auto began = std::chrono::steady_clock::now();
  const Outcome o = run_cli({"run", kResnet, "--timings"}, dir);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - began;
  ASSERT_EQ(o.code, 0) << o.err;
  const auto at = o.out.find("\n  phases: ");
  ASSERT_NE(at, std::string::npos) << o.out;
  std::string line = o.out.substr(at + 11, o.out.find('\n', at + 1) - at - 11);
  for (char& c : line)
    if (c == ',') c = ' ';
  std::istringstream in(line);
  std::vector<std::string> names;
  double sum = 0.0;
  std::string name, unit;
  double value = 0.0;
  while (in >> name >> value >> unit) {
    names.push_back(name);
    ASSERT_GE(value, 0.0) << line;
    const double scale = unit == "s" ? 1.0 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : -1.0;
    ASSERT_GT(scale, 0.0) << "unit '" << unit << "' in " << line;
    sum += value * scale;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"loading", "building", "matching", "simulating", "metrics"}))
      << line;
  EXPECT_LE(sum, wall.count()) << line;
  const Outcome plain = run_cli({"run", kResnet}, dir);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("phases:"), std::string::npos);
}

TEST(Cli, RefusesToWriteOutputsOverTheScenario) {
  const TempDir dir;
  const auto scenario = dir.write("tiny.yaml", kTiny);
  for (const char* flag : {"--json", "--trace"}) {
    const Outcome o = run_cli({"run", scenario.string(), flag, scenario.string()}, dir);
    EXPECT_EQ(o.code, 2) << flag;
    EXPECT_NE(o.err.find("refusing to overwrite"), std::string::npos) << o.err;
    EXPECT_EQ(read_file(scenario), kTiny) << flag << " touched the scenario";
  }
}

// Users run as root: an output path that is a device, a pipe or a link must survive the run.
TEST(Cli, OutputsNeverReplaceDevicesPipesOrLinks) {
  const TempDir dir;
  const auto scenario = dir.write("tiny.yaml", kTiny);
  // /dev/null stays the character device.
  Outcome o = run_cli({"run", scenario.string(), "--json", "/dev/null"}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // A link stays a link; the file it points to receives the result.
  const auto real = dir.write("real.json", "old");
  fs::create_symlink(real, dir / "link.json");
  o = run_cli({"run", scenario.string(), "--json", (dir / "link.json").string()}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(json::parse(read_file(real))["scenario"], "tiny");
  // A dangling link too: the file it names is created, the link stays.
  fs::create_symlink(dir / "later.json", dir / "dangling.json");
  o = run_cli({"run", scenario.string(), "--json", (dir / "dangling.json").string()}, dir);
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.json"));
  EXPECT_EQ(json::parse(read_file(dir / "later.json"))["scenario"], "tiny");
  // A FIFO is written into, not replaced: a reader on the other end gets the JSON.
  const fs::path fifo = dir / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });
  o = run_cli({"run", scenario.string(), "--json", fifo.string()}, dir);
  reader.join();
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(json::parse(received)["scenario"], "tiny");
}

TEST(Cli, OutputInAMissingDirectoryIsBadInputAndNothingIsWritten) {
  const TempDir dir;
  const auto scenario = dir.write("tiny.yaml", kTiny);
  const Outcome o =
      run_cli({"run", scenario.string(), "--json", (dir / "no/such/dir/r.json").string()}, dir);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("no/such/dir"), std::string::npos) << o.err;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"tiny.yaml"});
}

TEST(Cli, OutputsAreWrittenAtomicallyWithoutLeftovers) {
  const TempDir dir;
  const auto scenario = dir.write("tiny.yaml", kTiny);
  // An existing output is replaced whole, and no temporary file stays behind.
  dir.write("r.json", "stale");
  const Outcome o = run_cli({"run", scenario.string(), "--json", (dir / "r.json").string(),
                             "--trace", (dir / "t.json").string()},
                            dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"r.json", "t.json", "tiny.yaml"}));
  EXPECT_TRUE(json::accept(read_file(dir / "r.json")));
  EXPECT_TRUE(json::accept(read_file(dir / "t.json")));
}

TEST(Cli, VersionAndHelp) {
  const TempDir dir;
  Outcome o = run_cli({"--version"}, dir);
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out.rfind("clustersim ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find(CLUSTERSIM_VERSION), std::string::npos) << o.out;

  o = run_cli({"--help"}, dir);
  EXPECT_EQ(o.code, 0);
  for (const char* sub : {"run", "presets", "calibrate"})
    EXPECT_NE(o.out.find(sub), std::string::npos) << sub << " missing from:\n" << o.out;

  o = run_cli({"run", "--help"}, dir);
  EXPECT_EQ(o.code, 0);
  for (const char* flag : {"--set", "--json", "--trace", "--network", "--reproducible"})
    EXPECT_NE(o.out.find(flag), std::string::npos) << flag << " missing from:\n" << o.out;
}

TEST(Cli, PresetsListsTheDesignPresetNames) {
  const TempDir dir;
  Outcome o = run_cli({"presets", "models"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  // DESIGN.md "Scenario file": model presets at least these.
  for (const char* m : {"resnet50", "bert-large", "gpt2-xl", "gpt3-175b", "llama2-7b", "llama2-70b",
                        "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"})
    EXPECT_NE(o.out.find(m), std::string::npos) << m;
  o = run_cli({"presets", "gpus"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  // DESIGN.md "Compute model": GPU presets at least these.
  for (const char* g : {"V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                        "H200-SXM-141GB", "B200", "L40S", "cpu"})
    EXPECT_NE(o.out.find(g), std::string::npos) << g;
  o = run_cli({"presets", "nodes"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("dgx-a100"), std::string::npos);
  o = run_cli({"presets"}, dir);  // all three tables
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("resnet50"), std::string::npos);
  EXPECT_NE(o.out.find("dgx-a100"), std::string::npos);
  EXPECT_EQ(run_cli({"presets", "teapots"}, dir).code, 2);
}

}  // namespace
}  // namespace clustersim::cli::testing
