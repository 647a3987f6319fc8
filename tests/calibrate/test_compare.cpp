// `clustersim compare` (calibrate/compare.hpp) on hand-written result JSON: every figure below is
// worked out from the inputs by hand.
#include <gtest/gtest.h>

#include <sstream>

#include "calibrate/compare.hpp"

namespace clustersim::calibrate {
namespace {

using json = nlohmann::ordered_json;

json predicted() {
  return json::parse(R"({"scenario": "s", "iteration_time_s": 1.0,
    "breakdown_s": {"compute": 0.7, "dp_comm": 0.2, "idle": 0.1}})");
}

json measured() {
  return json::parse(R"({"scenario": "s", "iteration_time_s": 1.25,
    "breakdown_s": {"compute": 0.8, "dp_comm": 0.15, "idle": 0.3},
    "ops": [
      {"id": 0, "rank": 0, "stream": "compute", "label": "fwd", "kind": "compute",
       "category": "forward", "predicted_start_s": 0.0, "predicted_end_s": 0.5,
       "start_s": 0.0, "end_s": 0.55},
      {"id": 1, "rank": 0, "stream": "comm", "label": "ar", "kind": "collective",
       "category": "dp-comm", "predicted_start_s": 0.5, "predicted_end_s": 0.7,
       "start_s": 0.55, "end_s": 1.25},
      {"id": 2, "rank": 1, "stream": "compute", "label": "fwd", "kind": "compute",
       "category": "forward", "predicted_start_s": 0.0, "predicted_end_s": 0.5,
       "start_s": 0.0, "end_s": 0.3}]})");
}

TEST(Compare, ErrorsArePredictedMinusMeasuredAndCategoriesAddUp) {
  const Comparison c = compare_results(predicted(), measured(), "p.json", "m.json", 2);
  EXPECT_DOUBLE_EQ(c.iteration.error_s(), -0.25);
  EXPECT_DOUBLE_EQ(c.iteration.relative(), -0.2);  // -0.25 / 1.25
  ASSERT_EQ(c.categories.size(), 3u);
  EXPECT_EQ(c.categories[1].name, "dp_comm");
  EXPECT_NEAR(c.categories[1].error_s(), 0.05, 1e-12);
  double sum = 0;
  for (const Figure& f : c.categories)
    sum += f.error_s();
  EXPECT_NEAR(sum, c.iteration.error_s(), 1e-12);  // -0.1 + 0.05 - 0.2
  // Per-op errors: op 1 0.2 - 0.7 = -0.5, op 2 0.5 - 0.3 = +0.2, op 0 0.5 - 0.55 = -0.05.
  EXPECT_EQ(c.ops_compared, 3u);
  ASSERT_EQ(c.largest.size(), 2u);
  EXPECT_EQ(c.largest[0].id, 1u);
  EXPECT_NEAR(c.largest[0].error_s(), -0.5, 1e-12);
  EXPECT_EQ(c.largest[1].id, 2u);
  EXPECT_NEAR(c.largest[1].error_s(), 0.2, 1e-12);
  std::ostringstream table;
  print_comparison(table, c);
  EXPECT_NE(table.str().find("sum of categories"), std::string::npos);
  EXPECT_NE(table.str().find("-20.0%"), std::string::npos);
}

TEST(Compare, ADifferentScenarioOrAMissingKeyNamesTheFileAndKey) {
  json other = measured();
  other["scenario"] = "t";
  try {
    compare_results(predicted(), other, "p.json", "m.json");
    FAIL() << "a different scenario was compared";
  } catch (const CompareError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos);
  }
  json no_ops = measured();
  no_ops.erase("ops");
  try {
    compare_results(predicted(), no_ops, "p.json", "run.json");
    FAIL() << "a result without ops was compared";
  } catch (const CompareError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: no key 'ops'"), std::string::npos);
  }
  json bad = measured();
  bad["ops"][1]["end_s"] = "soon";
  EXPECT_THROW(compare_results(predicted(), bad, "p.json", "m.json"), CompareError);
}

TEST(Compare, MergedTraceHasAPredictedAndAMeasuredLanePerRank) {
  const json t = merged_trace(measured(), "m.json");
  int complete = 0, names = 0;
  for (const json& e : t.at("traceEvents")) {
    if (e.at("ph") == "X") ++complete;
    if (e.at("ph") == "M" && e.at("name") == "process_name") ++names;
    if (e.at("ph") == "X" && e.at("pid") == 1 && e.at("args").at("op") == 1) {
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 0.55e6);  // measured start, in µs
      EXPECT_NEAR(e.at("dur").get<double>(), 0.7e6, 1e-6);
    }
  }
  EXPECT_EQ(complete, 6);  // 3 ops × (predicted, measured)
  EXPECT_EQ(names, 4);     // 2 ranks × 2 lanes
}

}  // namespace
}  // namespace clustersim::calibrate
