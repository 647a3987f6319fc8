// Sweeps (models/sweep.hpp): the --vary grammar, the product's order, validation before running,
// resumed rows, the best point per objective and the CSV's quoting.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "models/sweep.hpp"

namespace clustersim::models {
namespace {

const std::string kBucketStudy =
    std::string(CLUSTERSIM_SCENARIOS_DIR) + "/gpt2-xl-bucket-study.yaml";

TEST(SweepAxis, GeometricRangeDoublesUpToTheEnd) {
  const SweepAxis axis = parse_sweep_axis("parallel.bucket_mb=1..256x2");
  EXPECT_EQ(axis.key, "parallel.bucket_mb");
  EXPECT_EQ(axis.values,
            (std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64", "128", "256"}));
}

TEST(SweepAxis, ListsStepsAndFractionsMix) {
  EXPECT_EQ(parse_sweep_axis("k=3..7+2,ddp").values,
            (std::vector<std::string>{"3", "5", "7", "ddp"}));
  EXPECT_EQ(parse_sweep_axis("k=1..3").values, (std::vector<std::string>{"1", "2", "3"}));
  // 0.1 + 0.1 + 0.1 is 0.30000000000000004: the end still counts.
  EXPECT_EQ(parse_sweep_axis("k=0.1..0.3+0.1").values.size(), 3u);
}

TEST(SweepAxis, BadSyntaxIsAnErrorNamingTheFlag) {
  for (const char* bad :
       {"noequals", "=1,2", "k=1,,2", "k=5..1", "k=1..8x1", "k=0..8x2", "k=1..a", "k=1..4+0"}) {
    try {
      parse_sweep_axis(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find("--vary"), std::string::npos) << e.what();
    }
  }
}

TEST(SweepPoints, LastAxisVariesFastest) {
  const std::vector<SweepAxis> axes{{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  const auto points = sweep_points(axes);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[4].values, (std::vector<std::string>{"2", "y"}));
  EXPECT_EQ(point_overrides(axes, points[4]), (std::vector<std::string>{"a=2", "b=y"}));
}

SweepRequest bucket_request(std::vector<SweepAxis> axes) {
  SweepRequest request;
  request.base.scenario = kBucketStudy;
  request.axes = std::move(axes);
  request.jobs = 2;
  return request;
}

TEST(RunSweep, InvalidPointsAreListedWithTheirReasonAndNotRun) {
  SweepRequest request = bucket_request({{"parallel.overlap", {"true", "maybe", "false"}}});
  std::size_t last_done = 0, total = 0;
  request.progress = [&](std::size_t done, std::size_t all) {
    last_done = done;
    total = all;
  };
  const SweepResult r = run_sweep(request);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(last_done, 3u);
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(r.rows[1].status, SweepStatus::invalid);
  EXPECT_NE(r.rows[1].reason.find("parallel.overlap"), std::string::npos);
  EXPECT_TRUE(r.rows[1].result.empty());
  for (std::size_t i : {0u, 2u}) {
    const SweepRow& row = r.rows[i];
    ASSERT_EQ(row.status, SweepStatus::ok) << row.reason;
    // tokens/s = global batch 64 x seq_len 1024 / iteration time (the scenario's figures).
    EXPECT_NEAR(row.result["tokens_per_s"].get<double>(),
                64.0 * 1024.0 / row.result["iteration_time_s"].get<double>(), 1e-6);
  }
  // Overlapping the all-reduce with backward cannot be slower than running it after: the best
  // iteration time is overlap=true, point 0.
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(r.best[0].objective, "iteration_time_s");
  EXPECT_EQ(r.best[0].index, 0u);
}

// A row callback that fails (the CSV's disk is full) is an error of the sweep, raised once every
// point has ended; thrown inside a pool thread it would have ended the process.
TEST(RunSweep, ACallbackThatThrowsIsRaisedToTheCaller) {
  SweepRequest request = bucket_request({{"parallel.bucket_mb", {"5", "50"}}});
  std::atomic<int> rows{0};
  request.on_row = [&](const SweepRow&) {
    ++rows;
    throw std::runtime_error("disk full");
  };
  EXPECT_THROW(run_sweep(request), std::runtime_error);
  EXPECT_EQ(rows.load(), 2);
}

TEST(RunSweep, ResumedRowsAreKeptAndNotRunAgain) {
  SweepRequest request = bucket_request({{"parallel.bucket_mb", {"5", "50"}}});
  SweepRow earlier{1, {"50"}, SweepStatus::ok, {}, {{"iteration_time_s", 123.0}}};
  request.resumed = {earlier};
  std::vector<std::size_t> ran;
  request.on_row = [&](const SweepRow& row) { ran.push_back(row.index); };
  const SweepResult r = run_sweep(request);
  EXPECT_EQ(ran, std::vector<std::size_t>{0});
  EXPECT_EQ(r.resumed, 1u);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[1].result["iteration_time_s"].get<double>(), 123.0);
}

TEST(BestPoints, TiesGoToTheLowestIndexAndPointsThatDoNotFitAreSkipped) {
  std::vector<SweepRow> rows{
      {0, {"a"}, SweepStatus::ok, {}, {{"iteration_time_s", 1.0}, {"memory.fits", false}}},
      {1, {"b"}, SweepStatus::ok, {}, {{"iteration_time_s", 2.0}, {"memory.fits", true}}},
      {2, {"c"}, SweepStatus::ok, {}, {{"iteration_time_s", 2.0}, {"memory.fits", true}}},
      {3, {"d"}, SweepStatus::invalid, "bad", {}}};
  const auto best = best_points(rows);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].index, 1u);
  EXPECT_TRUE(best[0].minimize);
}

TEST(SweepOutput, CsvQuotesReasonsAndJsonRoundTripsForResume) {
  SweepResult r{"s.yaml", {{"k", {"1", "2"}}}, {}, {}, 0};
  r.rows = {{0, {"1"}, SweepStatus::invalid, "k: bad, \"quoted\"", {}},
            {1, {"2"}, SweepStatus::ok, {}, {{"iteration_time_s", 0.5}}}};
  const auto dir = std::filesystem::temp_directory_path() / "clustersim-test-sweep-output";
  std::filesystem::create_directories(dir);
  write_sweep_csv(r, (dir / "s.csv").string());
  write_sweep_json(r, (dir / "s.json").string());
  std::ifstream csv(dir / "s.csv");
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_EQ(text.str(),
            "index,k,status,reason,iteration_time_s\n"
            "0,1,invalid,\"k: bad, \"\"quoted\"\"\",\n"
            "1,2,ok,,0.5\n");
  const auto rows = read_sweep_rows((dir / "s.json").string(), r.axes);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].reason, r.rows[0].reason);
  EXPECT_EQ(rows[1].result["iteration_time_s"].get<double>(), 0.5);
  EXPECT_THROW(read_sweep_rows((dir / "s.json").string(), {{"other", {"1"}}}), ScenarioError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clustersim::models
