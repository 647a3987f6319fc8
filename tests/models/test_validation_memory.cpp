// The memory model against published per-GPU peaks (validation/memory/, docs/memory.md
// "Validation"), and every published training run of validation/training/ judged to fit.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "models/memory_model.hpp"
#include "models/scenario.hpp"
#include "models/validation_memory.hpp"

namespace clustersim::models {
namespace {

const std::string kValidation = std::string(CLUSTERSIM_SCENARIOS_DIR) + "/../validation";

// Cases outside ±10 % and what the model lacks for each (docs/memory.md "Validation"). A case
// that comes inside must leave this list (and the docs); none is ever dropped from the suite.
const std::map<std::string, std::string> kOutside = {
    {"torchtune-llama2-7b-4x4090-fsdp",
     "which statistic is published is unknown (reserved under FSDP's all-gather churn?)"},
};

TEST(ValidationMemory, PublishedPeaksWithinTenPercent) {
  const std::string dir = kValidation + "/memory";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not found";
  const auto results = run_memory_validation(dir);
  ASSERT_GE(results.size(), 16u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.id + " " + r.metric);
    ASSERT_TRUE(r.failure.empty()) << r.failure;
    EXPECT_GT(r.simulated, 0);
    if (kOutside.count(r.id) != 0) {
      EXPECT_GT(std::abs(r.error), 0.10)
          << "now within ±10 % (" << r.error * 100 << " %): take it off kOutside and the docs";
      continue;
    }
    EXPECT_LE(std::abs(r.error), 0.10)
        << "published " << r.published << " " << r.unit << ", simulated " << r.simulated;
  }
}

TEST(ValidationMemory, PublishedTrainingRunsFit) {
  const std::string dir = kValidation + "/training";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not found";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    Scenario sc;
    try {
      sc = parse_scenario(text.str(), entry.path().string());
    } catch (const ScenarioError& e) {
      // Keys the loader does not read yet (parallel.cp, precision fp8, ...): named, not judged.
      std::cout << "[ SKIPPED  ] " << entry.path().filename().string() << ": " << e.what() << "\n";
      continue;
    }
    const MemoryEstimate m = estimate_memory_only(sc);
    EXPECT_TRUE(m.fits()) << m.total() / (1 << 30) << " GiB of " << m.capacity / (1 << 30)
                          << " GiB, peak at " << m.phase;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// Llama 3 405B at 8K on 8,192 H100s (TP 8, PP 16, interleaved, no activation checkpointing) fits
// only with sequence parallelism: without it every rank keeps the norms' and GEMMs' whole inputs,
// 1.47 GB per block and micro-batch, and the first stages hold about one micro-batch of every
// block (Korthikanti et al. 2022, §4.2.3: p micro-batches of L/p layers), 126 × 1.47 GB > 80 GB.
TEST(ValidationMemory, Llama3FitsOnlyWithSequenceParallelism) {
  const std::string file = kValidation + "/training/llama3-405b-8k-8192gpu.yaml";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not found";
  const MemoryEstimate with = estimate_memory_only(load_scenario(file));
  EXPECT_TRUE(with.fits()) << with.total() / (1 << 30) << " GiB at " << with.phase;
  const MemoryEstimate without =
      estimate_memory_only(load_scenario(file, {"parallel.sequence_parallel=false"}));
  EXPECT_GT(without.peak.activations, 126 * 1.47e9);
  EXPECT_FALSE(without.fits());
}

}  // namespace
}  // namespace clustersim::models
