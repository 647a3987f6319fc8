// The CUDA backend on a machine without a GPU (the CI runners and this project's build machines):
// it must be a clear BackendUnavailable before anything is measured or written, whether the
// backend was built (nvcc + NCCL found) or not.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "calibrate/backend.hpp"

namespace clustersim::calibrate {
namespace {

TEST(CudaBackend, WithoutAGpuItIsAClearError) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  BenchOptions options;
  options.quick = true;
  try {
    (void)calibrate("cuda", options);
    FAIL() << "the cuda backend ran without a GPU";
  } catch (const BackendUnavailable& e) {
    const std::string what = e.what();
    if (backend_built("cuda"))
      EXPECT_NE(what.find("found no usable GPU"), std::string::npos) << what;
    else
      EXPECT_NE(what.find("not built"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace clustersim::calibrate
