// `calibrate from-execution` (calibrate/from_execution.hpp) on a hand-written execution JSON: the
// fitted figures are worked out from the inputs by hand.
#include <gtest/gtest.h>

#include "calibrate/from_execution.hpp"
#include "calibrate/nccl_tests_import.hpp"

namespace clustersim::calibrate {
namespace {

using nlohmann::json;

json op(const std::string& kind, double start, double launch, double end, double bytes) {
  return {
      {"kind", kind}, {"start_s", start}, {"launch_s", launch}, {"end_s", end}, {"bytes", bytes}};
}

json collective(const std::string& type, double launch, double took, double bytes) {
  json o = op("collective", launch - 0.5, launch, launch + took, bytes);
  o["collective"] = type;
  o["group_ranks"] = 2;
  o["group_nodes"] = 1;
  return o;
}

json execution() {
  json ops = json::array();
  for (double took : {0.01, 0.03, 0.02}) {  // median 0.02 s
    json c = op("compute", 1.0, 1.0, 1.0 + took, 0);
    c["flops"] = 1e8;
    ops.push_back(c);
  }
  // all_reduce on 2 ranks (bus factor 2(n-1)/n = 1): t = 10 us + S / 1 GB/s, from the launch.
  ops.push_back(collective("all_reduce", 2.0, 1e-5 + 1e-3, 1e6));
  ops.push_back(collective("all_reduce", 3.0, 1e-5 + 4e-3, 4e6));
  ops.push_back(collective("all_reduce", 4.0, 1e-5 + 16e-3, 16e6));
  // One size only: bandwidth through it, 2e6 B × factor 0.5 / 1 ms = 1 GB/s.
  ops.push_back(collective("reduce_scatter", 5.0, 1e-3, 2e6));
  return {{"execution",
           {{"backend", "mpi"},
            {"compute_dtype", "fp32"},
            {"ranks", 2},
            {"hosts", 1},
            {"device", "cpu"}}},
          {"ops", ops}};
}

TEST(FromExecution, FitsComputeByMedianAndCollectivesByLaunchToEnd) {
  const Profile p = profile_from_execution(execution(), "m.json");
  // 1e8 FLOPs as 256×256×k tiles: k = round(1e8 / 131072) = 763, 2·256·256·763 FLOPs.
  const double flops = 131072.0 * 763;
  EXPECT_NEAR(p.compute.throughput("fp32", flops), flops / 0.02, 1.0);
  EXPECT_EQ(p.provenance.backend, "mpi");
  EXPECT_EQ(p.provenance.gpu, "cpu");
  ASSERT_EQ(p.provenance.sources.size(), 1u);
  const auto& fits = p.collectives.fits();
  ASSERT_EQ(fits.size(), 2u);
  for (const auto& f : fits) {
    ASSERT_EQ(f.ranges.size(), 1u);
    if (f.type == engine::CollectiveType::all_reduce) {
      EXPECT_NEAR(f.ranges[0].alpha_s, 1e-5, 1e-7);
      EXPECT_NEAR(f.ranges[0].busbw, 1e9, 1e6);
    } else {
      EXPECT_EQ(f.type, engine::CollectiveType::reduce_scatter);
      EXPECT_DOUBLE_EQ(f.ranges[0].alpha_s, 0.0);
      EXPECT_NEAR(f.ranges[0].busbw, 1e9, 1.0);
    }
  }
}

TEST(FromExecution, ARunResultOrAnEmptyExecutionIsRefusedNamingTheKey) {
  json run = execution();
  run.erase("execution");
  try {
    profile_from_execution(run, "result.json");
    FAIL();
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("result.json: no key 'execution'"), std::string::npos);
  }
  json empty = execution();
  empty["ops"] = json::array();
  EXPECT_THROW(profile_from_execution(empty, "m.json"), ImportError);
  json bad = execution();
  bad["ops"][0]["end_s"] = "late";
  try {
    profile_from_execution(bad, "m.json");
    FAIL();
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("ops[0].end_s"), std::string::npos);
  }
}

}  // namespace
}  // namespace clustersim::calibrate
