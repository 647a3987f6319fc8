// What a parallel plan is built from: the model's layers, their pipeline partition, the rank
// layout and the plan's options. Plans see this narrow view, never the whole Scenario, so each
// can be unit-tested without a scenario file; every check on the options happened when the
// scenario was validated (models/scenario_validate.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/schedule.hpp"
#include "models/model_costs.hpp"
#include "models/rank_layout.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

struct PlanContext {
  const std::vector<LayerCost>& layers;         // the model as costed, forward order
  const std::vector<std::vector<int>>& chunks;  // layer indices of global chunk g = c·pp + stage
  const RankLayout& layout;
  const ParallelConfig& parallel;
  const TrainingConfig& training;
  const TransformerSpec* transformer = nullptr;  // null for a layer list
  int gpus_per_node = 1;
  int microbatches = 1;  // per iteration and pipeline

  // The bytes of a stored or communicated activation, weight or gradient element. Under fp8 only
  // the GEMMs' operands are fp8: Transformer Engine keeps the weights, the saved activations and
  // what crosses the network in bf16 (DeepSeek-V3 §3.3; TE's Linear), except the
  // sequence-parallel all-gathers (tensor_parallelism.cpp); parallel.fp8_comm puts more exchanges
  // at 1 byte: fp8_wire_bytes().
  int element_bytes() const { return stored_element_bytes(training.precision); }
  // The bytes per element of an exchange that parallel.fp8_comm quantizes (the MoE dispatch, a
  // ZeRO/FSDP parameter all-gather, a forward sequence-parallel reduce-scatter).
  int fp8_wire_bytes() const { return parallel.fp8_comm ? 1 : element_bytes(); }
  // The stored parameters' and gradients' dtype: fp32 under autocast, else the precision's.
  int parameter_bytes() const { return training.amp ? 4 : element_bytes(); }
  // The gradients' dtype: accumulated, reduced over data parallelism and stored in it.
  int gradient_bytes() const {
    return training.grad_reduce_dtype ? bytes_per_element(*training.grad_reduce_dtype)
                                      : parameter_bytes();
  }
  // Tokens of one sequence on this rank: context parallelism splits each sequence over cp ranks.
  int seq_len() const { return std::max(1, training.seq_len / std::max(1, parallel.cp)); }
  int full_seq_len() const { return std::max(1, training.seq_len); }
  // Context parallelism splits every token-proportional cost (and the attention's) over cp.
  int cp() const { return std::max(1, parallel.cp); }
  int num_experts() const {
    return transformer != nullptr && transformer->moe ? transformer->moe->num_experts : 0;
  }
  // The layers of pipeline stage `stage` in forward order, over all its chunks (under dualpipe
  // its forward-direction stage, then its reverse-direction one).
  template <typename F>
  void for_each_stage_layer(int stage, F&& f) const {
    for (int c = 0; c < parallel.chunks_per_rank(); ++c)
      for (int l : chunks[static_cast<std::size_t>(c * parallel.pp + stage)])
        f(l);
  }
};

// The rank layout of the scenario's plan, and the context its plans are built from (`layers`,
// `chunks` and `layout` must outlive the context).
RankLayout rank_layout(const ParallelConfig& parallel);
PlanContext plan_context(const Scenario& scenario, const std::vector<LayerCost>& layers,
                         const std::vector<std::vector<int>>& chunks, const RankLayout& layout);

// Per pipeline stage: the parameter tensors a rank of it steps (its share of the routed experts),
// which its optimizer's kernels count.
std::vector<std::uint64_t> stage_tensor_counts(const PlanContext& ctx);
// Per pipeline stage: the gradient bytes that Megatron's finalize_model_grads all-reduces over TP
// before the optimizer step under sequence parallelism (a TP rank's gradients of the tensors it
// holds whole, norms, router, latent down-projections, cover its own tokens only); 0 without it.
std::vector<std::uint64_t> tp_replicated_grad_bytes(const PlanContext& ctx);

// Posts the pipeline's sends on the communicator of its group when the framework batches them
// (ParallelConfig::pp_sends_on_group): a group "pp[i]" per pipeline, its ranks in stage order,
// apart from any group of the same ranks a collective runs on (a communicator of its own, as
// Megatron's pipeline and embedding groups are). Nothing for one stage or pair communicators.
void post_pipeline_sends(const ParallelConfig& parallel, const RankLayout& layout,
                         engine::ScheduleBuilder& builder);

// The schedule's process groups, one per distinct rank list, named "<kind>[<n>]" in the order
// they are first asked for.
class ProcessGroups {
 public:
  explicit ProcessGroups(engine::ScheduleBuilder& builder) : builder_(builder) {}
  engine::GroupId get(const std::vector<engine::Rank>& ranks, std::string_view kind);

  // The groups get() answered, each once, in the order first asked for, with their kinds.
  using Log = std::vector<std::pair<engine::GroupId, std::string>>;
  // Appends to `log` (nullptr: stops) what get() answers from now on; a replica's ranks ask for
  // their groups in the same order (training_schedule.cpp, stamping).
  void record(Log* log) { log_ = log; }

 private:
  engine::ScheduleBuilder& builder_;
  Log* log_ = nullptr;
  std::map<std::vector<engine::Rank>, engine::GroupId> ids_;
  std::map<std::string, int> count_;
};

// Where a plan emits its ops and finds its groups.
struct ScheduleSink {
  engine::ScheduleBuilder& ops;
  ProcessGroups& groups;
};

}  // namespace clustersim::models
