// The memory model against published per-GPU peaks (validation/memory/, docs/memory.md
// "Validation"), and every published training run of validation/training/ judged to fit.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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
    {"litgpt-gemma-2b-4xa10g-fsdp-full",
     "FSDP full-state-dict checkpoint load and the 256k-vocabulary root unit kept unsharded"},
    {"torchtune-llama2-7b-4x4090-fsdp",
     "which statistic is published is unknown (reserved under FSDP's all-gather churn?)"},
    {"torchtune-llama3.2-3b-a100-packed-ac",
     "torch.compile and chunked cross-entropy of that row; the optimizer's foreach temporaries "
     "assumed"},
    {"torchtune-llama3.2-3b-a100-packed",
     "torchtune's eager RoPE/RMSNorm fp32 upcasts and the loss' fp32 logits copies"},
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

// Published runs the memory model still judges out of memory (docs/memory.md "Known gap"): Llama 3
// 405B at 8K sequence on 8K and 16K H100s with PP 16 × V 7 interleaving and no activation
// checkpointing. The paper trained them; with Megatron's interleaved warm-up (154 blocks in
// flight on stage 1) they need 222 GiB without and 87 GiB with sequence parallelism: what Meta
// changed (its tunable schedule, V, SP) is not published. The 128K stage with CP 16 holds the
// same 8K tokens per rank and the same schedule (187 GiB). A case that comes to fit must leave
// this list.
const std::set<std::string> kDoesNotFitYet = {"llama3-405b-8k-8192gpu.yaml",
                                              "llama3-405b-8k-16384gpu.yaml",
                                              "llama3-405b-128k-cp16-16384gpu.yaml"};

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
    if (kDoesNotFitYet.count(entry.path().filename().string()) != 0) {
      EXPECT_FALSE(m.fits()) << "now fits: take it off kDoesNotFitYet and docs/memory.md";
      ++checked;
      continue;
    }
    EXPECT_TRUE(m.fits()) << m.total() / (1 << 30) << " GiB of " << m.capacity / (1 << 30)
                          << " GiB, peak at " << m.phase;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace clustersim::models
