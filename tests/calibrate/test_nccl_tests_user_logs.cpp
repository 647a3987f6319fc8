// nccl-tests / rccl-tests logs as users bring them (issue 18): job noise, no device list, a subset
// of the ranks, several tests in one file. Expected shapes are counted by hand from each log. The
// fits are checked against a hand fit in closed form on the log's printed out-of-place times:
// c = (t_last - t_second_last) / (S_last - S_second_last), busbw = factor / c, alpha = t_first -
// S_first * c (each agrees within 1 % with the model the log was generated from, README.md there).
#include <gtest/gtest.h>

#include <sstream>

#include "calibrate/nccl_tests_import.hpp"
#include "calibrate/nccl_tests_shape.hpp"

namespace clustersim::calibrate {
namespace {

const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/nccl-tests/";

std::string import_error(const std::string& file, const NcclTestsOptions& options = {}) {
  try {
    (void)read_nccl_tests_log(kDir + file, options);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "no error";
}

NcclTestsOptions on_nodes(std::uint32_t nodes) {
  NcclTestsOptions o;
  o.shape.nodes = nodes;
  return o;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Fitted α and busbw of the one protocol range that spans the largest sizes.
void expect_fit(const Profile& p, engine::CollectiveType type, std::uint32_t ranks,
                std::uint32_t nodes, double alpha_s, double busbw, double factor) {
  const auto f = p.collectives.lookup(type, {ranks, nodes});
  ASSERT_TRUE(f.exact) << engine::to_string(type) << " " << ranks << "/" << nodes;
  EXPECT_NEAR(f.fit->bus_factor, factor, 0.01);
  ASSERT_FALSE(f.fit->ranges.empty());
  EXPECT_NEAR(f.fit->ranges.front().alpha_s, alpha_s, 0.02 * alpha_s);
  EXPECT_NEAR(f.fit->ranges.back().busbw, busbw, 0.02 * busbw);
}

TEST(NcclTestsUserLogs, SlurmJobPrintsAreSkippedAndCounted) {
  const auto log = read_nccl_tests_log(kDir + "slurm_a100_2nodes.log", NcclTestsOptions{});
  ASSERT_EQ(log.tests.size(), 1u);
  EXPECT_EQ(log.tests[0].shape.ranks, 16u);  // ranks 0..15 listed
  EXPECT_EQ(log.tests[0].shape.nodes, 2u);   // gpu-a100-001, gpu-a100-002
  EXPECT_EQ(log.rows.size(), 42u);           // 1 KiB .. 1 GiB: 21 sizes × 2 halves
  // 3 SLURM lines, the srun echo, NCCL's bare version line, an MPI help notice, a Python warning.
  EXPECT_EQ(log.skipped_other_lines, 7u);
  EXPECT_EQ(log.skipped_debug_lines, 1u);
  EXPECT_EQ(log.first_skipped_line, 1u);
  EXPECT_EQ(log.first_skipped, "SLURM_JOB_NODELIST=gpu-a100-[001-002]");
  EXPECT_EQ(log.nccl_version, "2.29.3");

  std::vector<std::string> summary;
  const Profile p = import_nccl_tests({kDir + "slurm_a100_2nodes.log"}, {}, &summary);
  EXPECT_EQ(p.provenance.nodes, 2u);
  // 512 MiB 22524 us, 1 GiB 44882 us: c = 22358e-6 / 2^29 s/B, busbw = 1.875 / c = 45.0 GB/s;
  // 1 KiB 59.85 us: alpha = 59.85 - 1024 c = 59.81 us.
  expect_fit(p, engine::CollectiveType::all_reduce, 16, 2, 59.81e-6, 45.0e9, 2.0 * 15 / 16);
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_TRUE(contains(summary[1], "skipped 7 lines")) << summary[1];
  EXPECT_TRUE(contains(summary[1], "SLURM_JOB_NODELIST")) << summary[1];
}

TEST(NcclTestsUserLogs, NoDeviceListInfersRanksFromTheBusFactor) {
  const auto e = import_error("b200_mpirun_g1.log");
  EXPECT_TRUE(contains(e, "b200_mpirun_g1.log:10: all_reduce test: cannot tell how many nodes"))
      << e;
  EXPECT_TRUE(contains(e, "--nodes N")) << e;

  const NcclTestsOptions two_nodes = on_nodes(2);
  const auto log = read_nccl_tests_log(kDir + "b200_mpirun_g1.log", two_nodes);
  ASSERT_EQ(log.tests.size(), 1u);
  // busbw/algbw = 1.875 = 2(n-1)/n  =>  n = 16.
  EXPECT_EQ(log.tests[0].shape.ranks, 16u);
  EXPECT_EQ(log.rows.size(), 40u);  // 8 KiB .. 4 GiB: 20 sizes × 2 halves
  EXPECT_EQ(log.skipped_other_lines, 1u);
  const Profile p = import_nccl_tests({kDir + "b200_mpirun_g1.log"}, two_nodes, nullptr);
  // 2 GiB 11218 us, 4 GiB 22335 us: busbw = 1.875 * 2^31 / 11117e-6 = 362.2 GB/s;
  // 8 KiB 44.89 us: alpha = 44.85 us.
  expect_fit(p, engine::CollectiveType::all_reduce, 16, 2, 44.85e-6, 362.2e9, 2.0 * 15 / 16);

  NcclTestsOptions wrong_ranks = on_nodes(2);
  wrong_ranks.shape.ranks = 8;
  const auto c = import_error("b200_mpirun_g1.log", wrong_ranks);
  EXPECT_TRUE(contains(c, "--ranks 8 conflicts")) << c;
  EXPECT_TRUE(contains(c, "implies 16 ranks")) << c;
}

TEST(NcclTestsUserLogs, RcclTestsWithTwoTestsInOneFile) {
  const auto log = read_nccl_tests_log(kDir + "rccl_mi300x_two_tests.log", NcclTestsOptions{});
  ASSERT_EQ(log.tests.size(), 2u);
  EXPECT_EQ(log.tests[0].collective, "all_reduce");
  EXPECT_EQ(log.tests[1].collective, "all_gather");
  for (const auto& t : log.tests) {
    EXPECT_EQ(t.shape.ranks, 8u);
    EXPECT_EQ(t.shape.nodes, 1u);
    EXPECT_EQ(t.row_count, 42u);
  }
  EXPECT_EQ(log.skipped_other_lines, 0u);  // rccl-tests' own header lines are known
  EXPECT_EQ(log.tests_version, "develop:5a1b2c3");
  EXPECT_EQ(log.nccl_version, "2.22.3");
  EXPECT_EQ(log.gpu, "AMD Instinct MI300X");
  const Profile p = import_nccl_tests({kDir + "rccl_mi300x_two_tests.log"}, {}, nullptr);
  // all_reduce: 512 MiB 3165.3 us, 1 GiB 6256.9 us: busbw = 1.75 * 2^29 / 3091.6e-6 = 303.9 GB/s;
  // 1 KiB 20.08 us: alpha = 20.07 us. all_gather: 1687.0 and 3356.7 us: busbw = 0.875 * 2^29 /
  // 1669.7e-6 = 281.3 GB/s; 1 KiB 15.03 us: alpha = 15.03 us.
  expect_fit(p, engine::CollectiveType::all_reduce, 8, 1, 20.07e-6, 303.9e9, 1.75);
  expect_fit(p, engine::CollectiveType::all_gather, 8, 1, 15.03e-6, 281.3e9, 7.0 / 8);
}

TEST(NcclTestsUserLogs, RankLinesOfOneNodeOnly) {
  const auto e = import_error("srun_subset_ranks.log");
  EXPECT_TRUE(contains(e, "list 8 ranks of 16, on 1 host")) << e;

  const NcclTestsOptions two_nodes = on_nodes(2);
  const auto log = read_nccl_tests_log(kDir + "srun_subset_ranks.log", two_nodes);
  ASSERT_EQ(log.tests.size(), 1u);
  // busbw/algbw = 15/16 = (n-1)/n  =>  n = 16, more than the 8 listed.
  EXPECT_EQ(log.tests[0].shape.ranks, 16u);
  EXPECT_TRUE(contains(log.tests[0].shape.ranks_from, "subset"));
  EXPECT_EQ(log.skipped_other_lines, 2u);
  EXPECT_EQ(log.skipped_debug_lines, 1u);
  const Profile p = import_nccl_tests({kDir + "srun_subset_ranks.log"}, two_nodes, nullptr);
  // 1 GiB 21044 us, 2 GiB 41996 us: busbw = 0.9375 * 2^30 / 20952e-6 = 48.0 GB/s;
  // 4 KiB 50.10 us: alpha = 50.02 us.
  expect_fit(p, engine::CollectiveType::reduce_scatter, 16, 2, 50.02e-6, 48.0e9, 15.0 / 16);
}

TEST(NcclTestsUserLogs, ConflictingEvidenceShowsBoth) {
  const auto e = import_error("conflicting_ranks.log");
  EXPECT_TRUE(contains(e, "list 8 ranks")) << e;
  EXPECT_TRUE(contains(e, "implies 4 ranks")) << e;  // busbw/algbw = 1.5 = 2·3/4
  NcclTestsOptions four;
  four.shape.ranks = 4;
  EXPECT_TRUE(contains(import_error("conflicting_ranks.log", four), "highest is rank 7"));
}

TEST(NcclTestsUserLogs, BroadcastWithoutDeviceListNeedsRanks) {
  const std::string text =
      "# Collective test starting: broadcast_perf\n"
      "#  size count type redop root time algbw busbw #wrong\n"
      "  1024  256 float none 0 10.00 0.10 0.10 0\n"
      "  2048  512 float none 0 10.00 0.20 0.20 0\n";
  std::istringstream in(text);
  try {
    (void)parse_nccl_tests_log(in, "bc.log", NcclTestsOptions{});
    ADD_FAILURE();
  } catch (const ImportError& err) {
    EXPECT_TRUE(contains(err.what(), "bc.log:3: broadcast test: cannot tell how many GPUs"))
        << err.what();
  }
  std::istringstream again(text);
  NcclTestsOptions stated;
  stated.shape = {8, 1};
  const auto log = parse_nccl_tests_log(again, "bc.log", stated);
  EXPECT_EQ(log.rows.at(0).ranks, 8u);
  EXPECT_EQ(log.rows.at(0).nodes, 1u);
}

CollectiveMeasurement measured(double algbw, double busbw) {
  CollectiveMeasurement m;
  m.algbw = algbw;
  m.busbw = busbw;
  return m;
}

TEST(NcclTestsUserLogs, RanksFromBusFactor) {
  EXPECT_EQ(ranks_from_bus_factor("all_reduce", {measured(100, 175)}), 8u);            // 2·7/8
  EXPECT_EQ(ranks_from_bus_factor("all_reduce", {measured(100, 160)}), 5u);            // 2·4/5
  EXPECT_EQ(ranks_from_bus_factor("all_gather", {measured(64, 60)}), 16u);             // 15/16
  EXPECT_EQ(ranks_from_bus_factor("all_to_all", {measured(10, 5)}), 2u);               // 1/2
  EXPECT_EQ(ranks_from_bus_factor("all_reduce", {measured(100, 170)}), std::nullopt);  // n = 6.7
  EXPECT_EQ(ranks_from_bus_factor("broadcast", {measured(100, 100)}), std::nullopt);
  EXPECT_EQ(ranks_from_bus_factor("all_reduce", {measured(0, 0)}), std::nullopt);
}

}  // namespace
}  // namespace clustersim::calibrate
