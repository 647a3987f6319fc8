// What the optimizer keeps and what its step allocates, by optimizer, momentum and weight decay
// (training.momentum, training.weight_decay; docs/memory.md "Phases"). Expected figures are the
// parameter count of the shape times bytes per parameter, derived by hand from torch.optim's
// foreach steps: Adam's sqrt(v) list, the L2 term's new gradient list, nothing else.
#include <gtest/gtest.h>

#include <string>

#include "engine/kernels.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/memory_model.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/scenario.hpp"
#include "tests/models/scenario_error_check.hpp"

namespace clustersim::models {
namespace {

// An untied GPT shape on one GPU: l = 4, h = 1024, V = 32768, 2048 learned positions. Per block
// (biases and layer norms included) 12h² + 13h; embeddings V·h + 2048·h; final norm 2h; output
// matrix V·h.
constexpr double kStepH = 1024, kStepV = 32768, kStepPositions = 2048;
constexpr double kStepParams = kStepV * kStepH + kStepPositions * kStepH +
                               4 * (12 * kStepH * kStepH + 13 * kStepH) + 2 * kStepH +
                               kStepV * kStepH;

// fp32 on one GPU, 8 tokens: the activations are negligible next to the model states, so a
// step with a temporary is the peak.
std::string step_scenario(const std::string& optimizer) {
  return "name: step-memory\n"
         "cluster: {nodes: 1, gpus_per_node: 1, gpu: A100-SXM4-80GB}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, vocab_size: 32768,\n"
         "        tied_embeddings: false}\n"
         "training: {global_batch: 1, micro_batch: 1, seq_len: 8, precision: fp32,\n"
         "           optimizer_impl: foreach, attention: standard, " +
         optimizer +
         "}\n"
         "simulation: {network_model: ideal}\n";
}

MemoryEstimate step_estimate(const std::string& optimizer) {
  return estimate_memory_only(parse_scenario(step_scenario(optimizer), "test"));
}

TEST(OptimizerStepMemory, TorchSgdWithoutMomentumKeepsNoStateAndNoTemporary) {
  // torch.optim.SGD(params, lr): momentum 0, weight decay 0 -> `params += -lr * grads` in place.
  const auto plain = step_estimate("optimizer: sgd");
  EXPECT_DOUBLE_EQ(plain.peak.optimizer, 0.0);
  EXPECT_NEAR(plain.model_states, 8 * kStepParams, 1.0);  // fp32 weights and gradients
  // With momentum, one fp32 buffer per parameter, updated in place.
  const auto momentum = step_estimate("optimizer: sgd, momentum: 0.9");
  EXPECT_NEAR(momentum.model_states, 12 * kStepParams, 1.0);
  // With weight decay, `grads = torch._foreach_add(grads, params, alpha=wd)` is a new list.
  const auto decay = step_estimate("optimizer: sgd, momentum: 0.9, weight_decay: 1e-4");
  EXPECT_EQ(decay.phase, "optimizer step");
  EXPECT_NEAR(decay.peak.buffers, 4 * kStepParams, 1.0);
}

TEST(OptimizerStepMemory, AdamsL2DecayAddsASecondListAdamWsDoesNot) {
  const auto adam = step_estimate("optimizer: adam");
  EXPECT_EQ(adam.phase, "optimizer step");
  EXPECT_NEAR(adam.peak.buffers, 4 * kStepParams, 1.0);  // sqrt(v)
  const auto l2 = step_estimate("optimizer: adam, weight_decay: 0.1");
  EXPECT_NEAR(l2.peak.buffers, 8 * kStepParams, 1.0);  // sqrt(v) and grads + wd * params
  const auto decoupled = step_estimate("optimizer: adamw, weight_decay: 0.1");
  EXPECT_NEAR(decoupled.peak.buffers, 4 * kStepParams, 1.0);  // params *= 1 - lr * wd in place
}

TEST(OptimizerStepMemory, StatesPerParameterFollowMomentum) {
  TrainingConfig t;
  t.optimizer = Optimizer::sgd;
  t.precision = Precision::bf16;  // fp32 master (4) + fp32 momentum (4)
  t.momentum = 0.9;
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 8.0);
  t.momentum = 0;  // the master copy only
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 4.0);
  t.precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(optimizer_state_bytes_per_param(t), 0.0);
}

double kernel_bytes(const kernels::OptimizerKernelConfig& c) {
  engine::KernelTable names;
  double sum = 0;
  for (const auto& k : kernels::optimizer_kernels(c, names))
    sum += k.bytes;
  return sum;
}

TEST(OptimizerStepMemory, SgdStepTrafficFollowsMomentumAndDecay) {
  kernels::OptimizerKernelConfig c;
  c.params = 1e9;
  c.optimizer = kernels::OptimizerKind::sgd;
  c.master_weights = false;
  c.clip_grad = false;
  c.zero_grad = false;
  c.fused = false;
  c.momentum = false;  // params += -lr * grads: read 2 lists, write 1
  EXPECT_DOUBLE_EQ(kernel_bytes(c), 3 * 4 * 1e9);
  c.momentum = true;  // buf *= m (2), buf += grad (3), params += -lr * buf (3)
  EXPECT_DOUBLE_EQ(kernel_bytes(c), 8 * 4 * 1e9);
  c.l2_decay = true;  // grads + wd * params into a new list (3)
  EXPECT_DOUBLE_EQ(kernel_bytes(c), 11 * 4 * 1e9);
  c.fused = true;  // one pass: read grad, param, buffer; write param, buffer
  EXPECT_DOUBLE_EQ(kernel_bytes(c), 5 * 4 * 1e9);
  c.momentum = false;
  EXPECT_DOUBLE_EQ(kernel_bytes(c), 3 * 4 * 1e9);
}

TEST(OptimizerStepMemory, MomentumIsSgdsAndAShare) {
  const std::string head =
      "name: t\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: gpt2-xl\n"
      "training:\n"
      "  global_batch: 8\n"
      "  seq_len: 2048\n";
  expect_error(head + "  momentum: 0.9\n", "bad.yaml:7", "training.momentum",
               "momentum is SGD's; this scenario's optimizer is adam");
  expect_error(head + "  optimizer: sgd\n  momentum: 1\n", "bad.yaml:8", "training.momentum",
               "allowed: 0 <= value < 1");
  expect_error(head + "  weight_decay: -0.1\n", "bad.yaml:7", "training.weight_decay", "");
}

}  // namespace
}  // namespace clustersim::models
