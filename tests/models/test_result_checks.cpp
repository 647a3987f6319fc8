// Results are checked before they leave (issue 10): a figure that cannot be true (an MFU above
// 100 %, a category longer than the iteration, a NaN, a link busier than its bandwidth) is a bug
// report naming the invariant, never a printed prediction.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "models/frontend.hpp"
#include "models/result_checks.hpp"

namespace clustersim::models {
namespace {

const std::string kLlama = CLUSTERSIM_SCENARIOS_DIR "/llama2-7b-ddp-2xdgx-a100.yaml";

// A real result, which must pass.
const Result& real_result() {
  static const Result r = [] {
    RunRequest request;
    request.scenario = kLlama;
    return predict(request).output.result;
  }();
  return r;
}

void expect_broken(const std::function<void(Result&)>& spoil, const std::string& invariant) {
  Result r = real_result();
  spoil(r);
  try {
    check_result(r);
    ADD_FAILURE() << "accepted; expected the invariant " << invariant << " to fail";
  } catch (const ResultInvariantError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("invariant " + invariant + " "), std::string::npos) << m;
    EXPECT_NE(m.find("please report"), std::string::npos) << m;
  }
}

TEST(ResultChecks, ARealResultPasses) {
  EXPECT_GT(real_result().iteration_time_s, 0);
  EXPECT_NO_THROW(check_result(real_result()));
}

TEST(ResultChecks, EachBrokenInvariantIsNamed) {
  expect_broken([](Result& r) { r.iteration_time_s = -8698270.0; }, "iteration_time_s >= 0");
  expect_broken([](Result& r) { r.iteration_time_s = std::nan(""); }, "iteration_time_s is finite");
  expect_broken([](Result& r) { r.mfu = 10.22; }, "mfu <= 1");
  expect_broken([](Result& r) { r.breakdown_s.compute = 2 * r.iteration_time_s; },
                "breakdown_s.compute <= iteration_time_s");
  expect_broken(
      [](Result& r) {
        r.breakdown_s.idle = 0.6 * r.iteration_time_s;
        r.breakdown_s.compute = 0.6 * r.iteration_time_s;
      },
      "the breakdown's sum <= iteration_time_s");
  expect_broken([](Result& r) { r.exposed_comm_s.dp = std::numeric_limits<double>::infinity(); },
                "exposed_comm_s.dp is finite");
  expect_broken([](Result& r) { r.links.at(0).utilization = 1e32; },
                "links[" + real_result().links.at(0).name + "].utilization <= 1");
  expect_broken([](Result& r) { r.tokens_per_s = -1; }, "tokens_per_s >= 0");
}

}  // namespace
}  // namespace clustersim::models
