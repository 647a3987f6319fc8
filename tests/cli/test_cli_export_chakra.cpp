// `clustersim export-chakra FILE --out PREFIX` as users meet it (docs/interop.md): the files it
// writes, byte-identical reruns, and bad output paths refused before the run (exit 2). What the
// traces hold is tested in tests/chakra/.
#include <gtest/gtest.h>

#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

// 4 GPUs, one process group (data parallel over all four).
const std::string kHandDdp = std::string(CLUSTERSIM_TEST_DATA) + "/ddp-by-hand.yaml";

TEST(CliExportChakra, WritesATracePerRankAndTheCommGroupsByteIdenticallyOnRerun) {
  const TempDir dir;
  const std::string prefix = (dir / "ddp").string();
  const Outcome first = run_cli({"export-chakra", kHandDdp, "--out", prefix}, dir);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("4 Chakra execution traces"), std::string::npos) << first.out;
  EXPECT_EQ(dir.entries(),
            (std::vector<std::string>{"ddp.0.et", "ddp.1.et", "ddp.2.et", "ddp.3.et", "ddp.json"}));
  std::vector<std::string> bytes;
  for (const auto& name : dir.entries())
    bytes.push_back(read_file(dir / name));
  EXPECT_EQ(bytes.back(), "{\n  \"1\": [\n    0,\n    1,\n    2,\n    3\n  ]\n}\n");

  const Outcome second = run_cli({"export-chakra", kHandDdp, "--out", prefix}, dir);
  ASSERT_EQ(second.code, 0) << second.err;
  const auto names = dir.entries();
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(read_file(dir / names[i]), bytes[i]) << names[i];
}

TEST(CliExportChakra, AnOutputFolderThatDoesNotExistIsBadInput) {
  const TempDir dir;
  const Outcome o =
      run_cli({"export-chakra", kHandDdp, "--out", (dir / "missing" / "ddp").string()}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--out"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("does not exist"), std::string::npos) << o.err;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(CliExportChakra, NeedsOut) {
  const TempDir dir;
  const Outcome o = run_cli({"export-chakra", kHandDdp}, dir);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--out"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace clustersim::cli::testing
