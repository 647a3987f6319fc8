#include "models/plans/tied_embeddings.hpp"

#include <algorithm>
#include <cstdint>

namespace clustersim::models {

engine::OpId pair_all_reduce(const ScheduleSink& sink, engine::Rank r, engine::Rank other,
                             engine::StreamId stream, std::string_view name, std::string_view kind,
                             std::uint64_t bytes, std::span<const engine::OpId> deps) {
  std::vector<engine::Rank> pair = {r, other};
  std::sort(pair.begin(), pair.end());
  const engine::ScheduleBuilder::Common c{r,    stream,        engine::Category::dp_comm,
                                          name, engine::kNone, deps};
  return sink.ops.collective(c, engine::CollectiveType::all_reduce, sink.groups.get(pair, kind),
                             bytes);
}

bool reduces_tied_embedding(const PlanContext& ctx, int stage) {
  const TransformerSpec* t = ctx.transformer;
  const int pp = ctx.parallel.pp;
  return t != nullptr && t->tied_embeddings && pp > 1 && (stage == 0 || stage == pp - 1);
}

engine::OpId tied_embedding_grad_all_reduce(const PlanContext& ctx, const ScheduleSink& sink,
                                            engine::Rank r, int stage, engine::Rank other,
                                            engine::StreamId stream,
                                            const std::vector<engine::OpId>& deps) {
  if (!reduces_tied_embedding(ctx, stage)) return engine::kNone;
  const TransformerSpec& t = *ctx.transformer;
  // Megatron's VocabParallelEmbedding: vocab / tp rows of hidden elements on each TP rank.
  const std::uint64_t elements = static_cast<std::uint64_t>(t.vocab_size) /
                                 static_cast<std::uint64_t>(std::max(1, ctx.parallel.tp)) *
                                 static_cast<std::uint64_t>(t.hidden_size);
  return pair_all_reduce(sink, r, other, stream, "tied embedding grad all_reduce", "tied",
                         elements * static_cast<std::uint64_t>(ctx.gradient_bytes()), deps);
}

}  // namespace clustersim::models
