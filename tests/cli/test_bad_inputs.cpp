// The catalogue of hostile inputs (tests/data/bad/, issue 10): every file there is run through
// the CLI as tests/data/bad/expected.yaml says, and must fail with its exit code and message
// fragment (file:line:col: key:, worked out by hand), print no figure and write nothing.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const fs::path kBad = fs::path(CLUSTERSIM_TEST_DATA) / "bad";
constexpr const char* kManifest = "expected.yaml";

// `text` with every "{name}" replaced by its value.
std::string expand(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [name, value] : vars)
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at))
      text.replace(at, name.size(), value), at += value.size();
  return text;
}

TEST(BadInputCatalogue, EveryFileFailsWithItsExitCodeAndMessage) {
  const YAML::Node cases = YAML::LoadFile((kBad / kManifest).string())["cases"];
  ASSERT_TRUE(cases.IsSequence());
  std::set<std::string> listed;
  for (const auto& c : cases) {
    const auto file = c["file"].as<std::string>();
    SCOPED_TRACE(file + ": " + c["why"].as<std::string>());
    EXPECT_TRUE(listed.insert(file).second) << "listed twice";
    ASSERT_TRUE(fs::is_regular_file(kBad / file));
    const TempDir dir;
    const fs::path outputs = dir / "outputs";
    fs::create_directory(outputs);
    const std::vector<std::pair<std::string, std::string>> vars{{"{file}", (kBad / file).string()},
                                                                {"{data}", CLUSTERSIM_TEST_DATA},
                                                                {"{tmp}", outputs.string()}};
    std::vector<std::string> args;
    if (c["command"])
      for (const auto& a : c["command"])
        args.push_back(expand(a.as<std::string>(), vars));
    else
      args = {"run", (kBad / file).string()};
    if (c["args"])
      for (const auto& a : c["args"])
        args.push_back(expand(a.as<std::string>(), vars));

    const Outcome o = run_cli(args, dir);
    EXPECT_EQ(o.code, c["exit"].as<int>()) << o.err;
    EXPECT_NE(o.err.find(c["error"].as<std::string>()), std::string::npos) << o.err;
    EXPECT_EQ(o.out.find("iteration time"), std::string::npos) << o.out;
    EXPECT_TRUE(fs::is_empty(outputs)) << "bad input wrote an output";
  }
  // A file nobody listed would never be checked; the issue asks for at least 80 cases.
  for (const auto& entry : fs::directory_iterator(kBad)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == kManifest || listed.count(name) != 0) << name << " is not in " << kManifest;
  }
  EXPECT_GE(listed.size(), 80u);
}

}  // namespace
}  // namespace clustersim::cli::testing
