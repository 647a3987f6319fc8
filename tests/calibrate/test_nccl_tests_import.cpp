// nccl-tests import: layouts and variants of real output, and clear errors for what is not.
#include <gtest/gtest.h>

#include <sstream>

#include "calibrate/nccl_tests_import.hpp"

namespace clustersim::calibrate {
namespace {

const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/nccl-tests/";

std::string error_of(const std::string& file) {
  try {
    (void)read_nccl_tests_log(kDir + file);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "no error";
}

const CollectiveMeasurement& row(const NcclTestsLog& log, double bytes, bool in_place) {
  for (const auto& r : log.rows)
    if (r.bytes == bytes && r.in_place == in_place) return r;
  throw std::runtime_error("no row of " + std::to_string(bytes) + " bytes");
}

TEST(NcclTestsImport, CurrentFormatWithBothHalves) {
  const auto log = read_nccl_tests_log(kDir + "all_reduce_perf.h100x8.log");
  // 8 B .. 128 MiB in ×2 steps is 25 sizes, each with an out-of-place and an in-place result.
  ASSERT_EQ(log.rows.size(), 50u);
  EXPECT_EQ(log.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.nccl_version, "2.21.5");  // nccl-library=22105
  EXPECT_EQ(log.tests_version, "2.13.9");
  EXPECT_EQ(log.hosts, std::vector<std::string>{"dgx01"});
  // The 1 MiB line: "1048576 262144 float sum -1 30.03 34.91 61.10 0 29.95 35.01 61.26 0".
  const auto& oop = row(log, 1048576, false);
  EXPECT_EQ(oop.collective, "all_reduce");
  EXPECT_EQ(oop.ranks, 8u);
  EXPECT_EQ(oop.nodes, 1u);
  EXPECT_EQ(oop.count, 262144u);
  EXPECT_EQ(oop.dtype, "float");
  EXPECT_DOUBLE_EQ(oop.seconds, 30.03e-6);
  EXPECT_DOUBLE_EQ(oop.algbw, 34.91e9);
  EXPECT_DOUBLE_EQ(oop.busbw, 61.10e9);
  EXPECT_EQ(oop.wrong, 0);
  EXPECT_DOUBLE_EQ(row(log, 1048576, true).seconds, 29.95e-6);
}

TEST(NcclTestsImport, TaggedMultiNodeOutputWithDebugLines) {
  const auto log = read_nccl_tests_log(kDir + "all_gather_perf_2nodes_tagged.log");
  ASSERT_EQ(log.rows.size(), 38u);                  // 1 KiB .. 256 MiB: 19 sizes × 2 halves
  EXPECT_EQ(log.rows[0].collective, "all_gather");  // from the file name
  EXPECT_EQ(log.rows[0].ranks, 16u);
  EXPECT_EQ(log.rows[0].nodes, 2u);
  EXPECT_EQ(log.gpu, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(log.nccl_version, "2.18.3");  // from the NCCL INFO banner
  EXPECT_EQ((log.hosts), (std::vector<std::string>{"node01", "node02"}));
}

TEST(NcclTestsImport, OutOfPlaceOnlyWithUncheckedResults) {
  const auto log = read_nccl_tests_log(kDir + "alltoall_perf.l40sx4.nocheck.log");
  ASSERT_EQ(log.rows.size(), 9u);  // 1 KiB × 4^0..4^8, one half
  for (const auto& r : log.rows) {
    EXPECT_FALSE(r.in_place);
    EXPECT_EQ(r.wrong, -1);  // N/A
    EXPECT_EQ(r.collective, "all_to_all");
    EXPECT_EQ(r.ranks, 4u);
  }
  EXPECT_EQ(log.nccl_version, "2.19.3");
}

TEST(NcclTestsImport, LeadingStampsAndUnknownTrailingColumns) {
  const auto log = read_nccl_tests_log(kDir + "reduce_scatter_perf.timestamped.log");
  ASSERT_EQ(log.rows.size(), 30u);  // 4 KiB .. 64 MiB: 15 sizes × 2 halves
  // "2024-05-01 12:00:20  1048576 262144 float sum -1 24.91 42.09 31.57 0 24.91 42.10 31.58 0  7"
  const auto& r = row(log, 1048576, true);
  EXPECT_EQ(r.collective, "reduce_scatter");
  EXPECT_EQ(r.count, 262144u);
  EXPECT_DOUBLE_EQ(r.seconds, 24.91e-6);
  EXPECT_DOUBLE_EQ(r.busbw, 31.58e9);
  EXPECT_EQ(r.wrong, 0);  // the #wrong column, not the unknown trailing "7"
}

TEST(NcclTestsImport, TwoTestsInOneLog) {
  const auto log = read_nccl_tests_log(kDir + "two_tests_one_log.log");
  std::size_t all_reduce = 0, broadcast = 0;
  for (const auto& r : log.rows) {
    EXPECT_EQ(r.ranks, 2u);
    all_reduce += r.collective == "all_reduce";
    broadcast += r.collective == "broadcast";
  }
  EXPECT_EQ(all_reduce, 44u);  // 8 B .. 16 MiB: 22 sizes × 2 halves
  EXPECT_EQ(broadcast, 44u);
}

TEST(NcclTestsImport, ImportFitsTheGeneratingModel) {
  const Profile p = import_nccl_tests(
      {kDir + "all_reduce_perf.h100x8.log", kDir + "all_gather_perf_2nodes_tagged.log"});
  EXPECT_EQ(p.provenance.backend, "nccl-tests");
  EXPECT_EQ(p.provenance.nodes, 3u);  // dgx01, node01, node02
  EXPECT_EQ(p.provenance.sources.size(), 2u);
  // all_reduce: generated with a protocol switch at 128 KiB (README.md): α 12 µs / 40 GB/s below,
  // α 25 µs / 360 GB/s from there on, bus factor 2·7/8.
  const auto ar = p.collectives.lookup(engine::CollectiveType::all_reduce, {8, 1});
  ASSERT_TRUE(ar.exact);
  EXPECT_NEAR(ar.fit->bus_factor, 1.75, 0.01);
  ASSERT_EQ(ar.fit->ranges.size(), 2u);
  EXPECT_EQ(ar.fit->ranges[0].max_bytes, 65536);
  EXPECT_EQ(ar.fit->ranges[1].min_bytes, 131072);
  EXPECT_NEAR(ar.fit->ranges[0].alpha_s, 12e-6, 0.02 * 12e-6);
  // Below 128 KiB the size term is at most 64 KiB·1.75/40 GB/s = 2.9 µs of ~15 µs, so ±0.5 % noise
  // on the time moves the slope by several times more: 5 % here.
  EXPECT_NEAR(ar.fit->ranges[0].busbw, 40e9, 0.05 * 40e9);
  EXPECT_NEAR(ar.fit->ranges[1].alpha_s, 25e-6, 0.02 * 25e-6);
  EXPECT_NEAR(ar.fit->ranges[1].busbw, 360e9, 0.02 * 360e9);
  // all_gather over 2 nodes: α 40 µs, busbw 20 GB/s, factor 15/16, one range.
  const auto ag = p.collectives.lookup(engine::CollectiveType::all_gather, {16, 2});
  ASSERT_TRUE(ag.exact);
  ASSERT_EQ(ag.fit->ranges.size(), 1u);
  EXPECT_NEAR(ag.fit->bus_factor, 15.0 / 16.0, 0.01);
  EXPECT_NEAR(ag.fit->ranges[0].alpha_s, 40e-6, 0.02 * 40e-6);
  EXPECT_NEAR(ag.fit->ranges[0].busbw, 20e9, 0.02 * 20e9);
}

TEST(NcclTestsImport, NotNcclTestsOutputNamesFileAndLine) {
  const auto e = error_of("malformed_not_nccl.log");
  EXPECT_NE(e.find("malformed_not_nccl.log:1: not nccl-tests output"), std::string::npos) << e;
}

TEST(NcclTestsImport, TruncatedRowNamesItsLine) {
  const auto e = error_of("malformed_truncated_row.all_reduce_perf.log");
  EXPECT_NE(e.find("malformed_truncated_row.all_reduce_perf.log:35: result row has 7 columns"),
            std::string::npos)
      << e;
}

TEST(NcclTestsImport, MissingDeviceListNeedsOnlyTheNodeCount) {
  // busbw/algbw = 1.75 gives the 8 ranks; nothing in the log names the hosts.
  const auto e = error_of("malformed_no_ranks.all_reduce_perf.log");
  EXPECT_NE(e.find("cannot tell how many nodes took part"), std::string::npos) << e;
  NcclTestsOptions one_node;
  one_node.shape.nodes = 1;
  const auto log = read_nccl_tests_log(kDir + "malformed_no_ranks.all_reduce_perf.log", one_node);
  EXPECT_EQ(log.rows.at(0).ranks, 8u);
}

TEST(NcclTestsImport, OtherErrors) {
  std::istringstream no_collective(
      "#  Rank  0 Group  0 Pid 1 on h device 0 [0x01] GPU\n"
      "#  size count type redop root time algbw busbw #wrong\n"
      "   8 2 float sum -1 10.0 0.00 0.00 0\n");
  try {
    (void)parse_nccl_tests_log(no_collective, "run.log");
    ADD_FAILURE();
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("run.log:3: cannot tell which collective"),
              std::string::npos)
        << e.what();
  }
  std::istringstream bad_wrong(
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid 1 on h device 0 [0x01] GPU\n"
      "#  size count type redop root time algbw busbw #wrong\n"
      "   8 2 float sum -1 10.0 0.00 0.00 many\n");
  EXPECT_THROW((void)parse_nccl_tests_log(bad_wrong, "x.log"), ImportError);
  std::istringstream empty("");
  EXPECT_THROW((void)parse_nccl_tests_log(empty, "empty.log"), ImportError);
  EXPECT_THROW((void)read_nccl_tests_log(kDir + "does_not_exist.log"), ImportError);
}

}  // namespace
}  // namespace clustersim::calibrate
