#include "models/plans/offloaded_optimizer.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "models/offload.hpp"

namespace clustersim::models {

namespace {

using engine::Category;
using engine::OpId;

// The gradient copies: one after each reduction of the last micro-batch (ZeRO-2 reduces every
// micro-batch; the step needs the last), its share of `total` bytes in proportion to the bytes
// it reduced (the last takes the rounding). Without reductions (one data-parallel rank) one copy
// after the backward.
std::vector<std::pair<OpId, std::uint64_t>> gradient_copies(const engine::ScheduleBuilder& b,
                                                            engine::Rank r,
                                                            engine::StreamId compute,
                                                            const std::vector<OpId>& reduce_ops,
                                                            double total) {
  const engine::Schedule& s = b.peek();
  std::uint32_t last_mb = 0;
  for (const OpId id : reduce_ops)
    if (s.ops[id].microbatch() != engine::kNone)
      last_mb = std::max(last_mb, s.ops[id].microbatch());
  // A reduction another one continues (HSDP's shard reduce-scatter, all-reduced across the
  // replicas next) is not final: the copy follows the continuation.
  std::set<OpId> continued;
  for (const OpId id : reduce_ops)
    for (const OpId dep : s.dependencies(s.ops[id]))
      continued.insert(dep);
  std::vector<OpId> last;
  double reduced = 0;
  for (const OpId id : reduce_ops)
    if ((s.ops[id].microbatch() == engine::kNone || s.ops[id].microbatch() == last_mb) &&
        continued.count(id) == 0) {
      last.push_back(id);
      reduced += static_cast<double>(s.ops[id].bytes);
    }
  const auto all = static_cast<std::uint64_t>(total);
  if (last.empty() || !(reduced > 0)) return {{b.last_on(r, compute), all}};
  std::vector<std::pair<OpId, std::uint64_t>> out;
  std::uint64_t given = 0;
  for (std::size_t k = 0; k < last.size(); ++k) {
    const std::uint64_t bytes =
        k + 1 == last.size() ? all - given
                             : static_cast<std::uint64_t>(
                                   total * static_cast<double>(s.ops[last[k]].bytes) / reduced);
    given += bytes;
    out.emplace_back(last[k], bytes);
  }
  return out;
}

}  // namespace

OpId emit_offloaded_optimizer(engine::ScheduleBuilder& b, const TrainingConfig& training,
                              engine::Rank r, const OffloadStreams& streams,
                              const std::vector<OpId>& reduce_ops, double params,
                              std::span<const OpId> also_after) {
  const OptimizerOffload o = optimizer_offload(training, params);
  std::vector<OpId> downs;
  for (const auto& [after, bytes] :
       gradient_copies(b, r, streams.compute, reduce_ops, o.gradients_down)) {
    const std::span<const OpId> deps =
        after == engine::kNone ? std::span<const OpId>{} : std::span<const OpId>(&after, 1);
    downs.push_back(
        b.copy({r, streams.to_host, Category::optimizer, "offload grads d2h", engine::kNone, deps},
               bytes, engine::CopyDirection::to_host));
  }
  engine::Kernel cpu;
  cpu.kind = engine::KernelKind::host_memory;
  cpu.bytes = o.cpu_step_bytes;
  cpu.flops = params * kOptimizerFlopsPerParam;
  cpu.name = b.kernel_table().name("cpu optimizer step");
  downs.insert(downs.end(), also_after.begin(), also_after.end());
  const OpId step = b.compute(
      {r, streams.host, Category::optimizer, "cpu optimizer step", engine::kNone, downs}, cpu.flops,
      static_cast<std::uint64_t>(cpu.bytes), static_cast<std::uint8_t>(Precision::fp32),
      b.kernel_table().intern(std::span<const engine::Kernel>(&cpu, 1)));
  const OpId after_step[] = {step};
  return b.copy(
      {r, streams.from_host, Category::optimizer, "offload params h2d", engine::kNone, after_step},
      static_cast<std::uint64_t>(o.params_up), engine::CopyDirection::from_host);
}

}  // namespace clustersim::models
