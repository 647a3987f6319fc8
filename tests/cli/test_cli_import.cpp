// The importers as a user runs them (issue 18): `clustersim import-topo` on pasted
// `nvidia-smi topo -m` output, and `clustersim calibrate import-nccl-tests` on job logs that carry
// Slurm noise or no device list, with --ranks / --nodes.
#include "cli_harness.hpp"

namespace clustersim::cli::testing {
namespace {

const std::string kData = CLUSTERSIM_TEST_DATA;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliImportTopo, YamlOnStdoutNotesOnStderr) {
  const TempDir dir;
  const Outcome o = run_cli({"import-topo", kData + "/topo/hgx_h200_pasted.txt"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  // NV18 x 25 GB/s per link and direction; each GPU alone under its switch with one PIX NIC.
  EXPECT_TRUE(contains(o.out, "cluster:")) << o.out;
  EXPECT_TRUE(contains(o.out, "fabric: nvswitch")) << o.out;
  EXPECT_TRUE(contains(o.out, "nvlink_bandwidth: 450GB/s")) << o.out;
  EXPECT_TRUE(contains(o.out, "gpus_per_switch: 1")) << o.out;
  EXPECT_TRUE(contains(o.out, "nics_per_node: 8")) << o.out;
  EXPECT_FALSE(contains(o.out, "\n  gpu:")) << o.out;  // not in the matrix, not guessed
  EXPECT_TRUE(contains(o.err, "inferred from")) << o.err;
  EXPECT_TRUE(contains(o.err, "the GPU model")) << o.err;
}

TEST(CliImportTopo, OutFileWithGpu) {
  const TempDir dir;
  const std::string out = (dir / "cluster.yaml").string();
  const Outcome o = run_cli(
      {"import-topo", kData + "/topo/dgx_h100.txt", "--out", out, "--gpu", "H100-SXM5-80GB"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "wrote " + out)) << o.out;
  const std::string yaml = read_file(out);
  EXPECT_TRUE(contains(yaml, "gpu: H100-SXM5-80GB")) << yaml;
  EXPECT_TRUE(contains(yaml, "cpus: 2")) << yaml;
  EXPECT_TRUE(contains(yaml, "# Not in the matrix:")) << yaml;
}

TEST(CliImportTopo, BadInputIsExitTwoNamingFileAndLine) {
  const TempDir dir;
  const Outcome bad = run_cli({"import-topo", kData + "/topo/bad_cell.txt"}, dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, "bad_cell.txt:4: unknown connection 'PCI'")) << bad.err;
  const Outcome gpu = run_cli({"import-topo", kData + "/topo/dgx_a100.txt", "--gpu", "Z100"}, dir);
  EXPECT_EQ(gpu.code, 2);
  EXPECT_TRUE(contains(gpu.err, "Z100")) << gpu.err;
}

TEST(CliImportNcclTests, SlurmLogSaysWhatItSkipped) {
  const TempDir dir;
  const std::string out = (dir / "p.json").string();
  const Outcome o = run_cli(
      {"calibrate", "import-nccl-tests", kData + "/nccl-tests/slurm_a100_2nodes.log", "--out", out},
      dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "16 ranks (rank lines, agreeing with busbw/algbw), 2 nodes"))
      << o.out;
  EXPECT_TRUE(contains(o.out, "skipped 7 lines")) << o.out;
  EXPECT_TRUE(contains(o.out, "'SLURM_JOB_NODELIST=gpu-a100-[001-002]'")) << o.out;
}

TEST(CliImportNcclTests, NoDeviceListNeedsNodes) {
  const TempDir dir;
  const std::string out = (dir / "p.json").string();
  const std::string log = kData + "/nccl-tests/b200_mpirun_g1.log";
  const Outcome missing = run_cli({"calibrate", "import-nccl-tests", log, "--out", out}, dir);
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err,
                       "b200_mpirun_g1.log:10: all_reduce test: cannot tell how many "
                       "nodes took part"))
      << missing.err;
  EXPECT_FALSE(fs::exists(out));
  const Outcome o =
      run_cli({"calibrate", "import-nccl-tests", log, "--out", out, "--nodes", "2"}, dir);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "16 ranks (busbw/algbw (no rank lines)), 2 nodes (--nodes)"))
      << o.out;
  const Outcome conflict = run_cli(
      {"calibrate", "import-nccl-tests", log, "--out", out, "--nodes", "2", "--ranks", "8"}, dir);
  EXPECT_EQ(conflict.code, 2);
  EXPECT_TRUE(contains(conflict.err, "--ranks 8 conflicts")) << conflict.err;
}

}  // namespace
}  // namespace clustersim::cli::testing
