// models/statistics.hpp: the median the validate and gemm-report summaries print.
#include <gtest/gtest.h>

#include "models/statistics.hpp"

namespace clustersim::models {
namespace {

TEST(Statistics, MedianIsTheMiddleValueOrTheMeanOfTheTwoMiddleOnes) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({-1.0}), -1.0);
  EXPECT_THROW(median({}), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::models
