// One training iteration of a (tp, pp, dp) plan as per-rank op graphs (DESIGN.md "What each
// parallel plan must reproduce"):
// - every rank runs its pipeline stage's steps in the schedule's order (pipeline_order.hpp);
// - a forward step receives the activations of the previous stage, runs its layers with the
//   Megatron tensor-parallel collectives on the compute stream, and sends the result on; a
//   backward step mirrors it with gradients;
// - the data-parallel strategy (data_parallel.hpp: DDP, ZeRO, FSDP, HSDP) adds its gathers and
//   gradient reductions around the layers; then the optimizer steps.
// Point-to-point transfers use one stream per direction and kind, so a stage's sends and its
// peer's receives pair up in the same order and the pipeline cannot deadlock (under DeepSpeed's
// engine they block on the compute stream instead: deepspeed_pipeline.hpp).
#include "models/plans/training_schedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <variant>

#include "models/offload.hpp"
#include "models/plans/activation_offload.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/deepspeed_pipeline.hpp"
#include "models/plans/expert_parallelism.hpp"
#include "models/plans/folding.hpp"
#include "models/plans/layer_kernels.hpp"
#include "models/plans/offloaded_optimizer.hpp"
#include "models/plans/pass_segments.hpp"
#include "models/plans/pipeline_calls.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/replica_stamp.hpp"
#include "models/plans/stage_partition.hpp"
#include "models/plans/tensor_parallelism.hpp"
#include "models/plans/tied_embeddings.hpp"
#include "models/rank_layout.hpp"

namespace clustersim::models {

namespace {

using engine::Category;
using engine::OpId;
using engine::Rank;

// Composes the plans: the pipeline's order of steps, tensor (and expert) parallelism inside each
// layer, the data-parallel strategy around the layers, and the optimizer step.
class PlanComposer {
 public:
  PlanComposer(const Scenario& sc, BuiltSchedule& out, bool fold, bool stamp)
      : out_(out),
        layout_(rank_layout(sc.parallel)),
        ctx_(plan_context(sc, out.layers, out.partition, layout_)),
        iterations_(sc.simulation.iterations),
        b_(static_cast<std::uint32_t>(sc.world_size())),
        groups_(b_),
        sink_{b_, groups_},
        kernels_(ctx_, b_.kernel_table(), ExpertParallelism(ctx_).routed_copies()),
        tp_(ctx_, &kernels_),
        calls_(sc.parallel) {
    if (fold && sc.parallel.dp / sc.parallel.ep > 1) {
      ReplicaMirror m = data_parallel_mirror(sc, ctx_);
      if (m.replicas > 1) {
        b_.fold(std::move(m.mirror));
        out.folded_replicas = m.replicas;
      }
    }
    // Replicas (HSDP: shard groups) are stamped from the first (replica_stamp.hpp) unless folded
    // away or the layout cannot be stamped exactly; tp ranks from tp index 0, folded or not.
    stamper_ = std::make_unique<ReplicaStamper>(ctx_, b_, groups_,
                                                stamp && out.folded_replicas == 1, stamp);
    compute_ = b_.stream("compute");
    stage_tensors_ = stage_tensor_counts(ctx_);
    replicated_grad_bytes_ = tp_replicated_grad_bytes(ctx_);
    // With one data-parallel rank there is nothing to shard or reduce: every strategy runs as
    // DDP without communication.
    data_parallel_ = make_data_parallel(
        sc.parallel.replicas() > 1 ? sc.parallel.data_parallel : DataParallel::ddp, ctx_, tp_,
        &sink_);
    if (sc.parallel.cp > 1 && sc.parallel.cp_comm == ContextParallelComm::p2p)
      cp_stream_ = b_.stream("cp kv");
    // TP collectives beside compute: Transformer Engine's userbuffers (tp_comm_overlap), or
    // Megatron's asynchronous reduction of an input gradient (tp_async_grad_reduce).
    if (sc.parallel.tp_comm_overlap ||
        (sc.parallel.tp > 1 && sc.parallel.tp_async_grad_reduce_on()))
      tp_stream_ = b_.stream("tp overlap");
    // DualPipe's F&B pairs run one micro-batch's MoE all-to-alls beside the other's compute.
    if (sc.parallel.schedule == PipelineSchedule::dualpipe && sc.parallel.ep > 1 &&
        ctx_.transformer != nullptr && ctx_.transformer->moe)
      ep_stream_ = b_.stream("ep all_to_all");
    if (sc.parallel.offload.any()) {
      to_host_ = b_.stream("offload d2h");
      from_host_ = b_.stream("offload h2d");
    }
    if (sc.parallel.offload.optimizer) host_ = b_.stream("host optimizer");
    if (sc.parallel.pipeline_engine == PipelineEngine::deepspeed)
      deepspeed_ = std::make_unique<DeepSpeedPipe>(ctx_, sink_, compute_);
    if (sc.parallel.offload.activations)
      activations_ = std::make_unique<ActivationOffload>(
          ctx_, ctx_.transformer != nullptr ? &kernels_.config() : nullptr, b_, to_host_,
          from_host_);
    if (sc.parallel.pp > 1) {
      // DualPipe's reverse direction talks to the other neighbours: streams of its own, so that
      // each stream still has one peer.
      const bool dual = sc.parallel.schedule == PipelineSchedule::dualpipe;
      for (int d = 0; d < 2; ++d) {
        const std::string rev = d == 1 && dual ? " rev" : "";
        recv_fwd_[d] = b_.stream("pp recv act" + rev);
        send_fwd_[d] = b_.stream("pp send act" + rev);
        recv_bwd_[d] = b_.stream("pp recv grad" + rev);
        send_bwd_[d] = b_.stream("pp send grad" + rev);
      }
    }
  }

  // `progress`, when set, gets the share of the ranks' op lists built (0..1) after each rank.
  engine::Schedule build(const std::function<void(double)>& progress) {
    const int world = layout_.world_size();
    const std::size_t simulated = b_.peek().simulated_ranks();
    const auto its = static_cast<std::size_t>(iterations_);
    const double total = static_cast<double>(simulated * its);
    double done = 0;
    optimizer_.assign(static_cast<std::size_t>(world), engine::kNone);
    for (int it = 0; it < iterations_; ++it)
      for (int r = 0; r < world; ++r) {
        if (!b_.peek().simulated(static_cast<Rank>(r))) continue;
        const bool first = b_.size() == 0;
        const auto rank = static_cast<Rank>(r);
        if (const Rank source = stamper_->source(rank); source != rank) {
          stamper_->stamp(rank);
          ++out_.stamped_ranks;
          optimizer_[rank] = stamper_->copy_of(rank, optimizer_[source]);
        } else {
          stamper_->begin_build(rank);
          emit_rank(rank);
          stamper_->end_build(rank);
        }
        // Every rank issues about as many ops as the first: size the arrays once instead of
        // letting them double. Stamped ranks hold dependency lists but no op records.
        if (first)
          b_.reserve(b_.size() * stamper_->building_ranks() * its * 11 / 10,
                     b_.peek().deps.size() * simulated * its * 11 / 10);
        if (progress) progress(++done / total);
      }
    out_.buckets = data_parallel_->reported_buckets();
    post_pipeline_sends(ctx_.parallel, layout_, b_);  // after the ops: no other group's id moves
    return std::move(b_).finish();
  }

 private:
  Rank stage_rank(Rank r, int stage) const {
    auto c = layout_.coords(r);
    c.pp = stage;
    return layout_.rank(c);
  }

  // Bytes of the activation (or its gradient) leaving chunk g.
  std::uint64_t boundary_bytes(int g) const {
    return tp_.boundary_bytes(
        ctx_.layers[static_cast<std::size_t>(ctx_.chunks[static_cast<std::size_t>(g)].back())]);
  }

  // Where chunk `chunk` of `stage` sits in its pipeline: global chunk g = chunk · pp + stage,
  // the chunks before and after it (on stages g ∓ 1 mod pp), or none at the ends. DualPipe's
  // reverse chunk (chunk 1: stage pp − 1 − stage) runs from rank pp − 1 down to rank 0.
  struct ChunkPlace {
    int g = 0;
    int prev = -1, next = -1;  // global chunks, -1: none
    int direction = 0;         // 1: dualpipe's reverse direction
  };
  ChunkPlace place(int stage, int chunk) const {
    const int pp = ctx_.parallel.pp;
    const int g = chunk * pp + stage;
    if (ctx_.parallel.schedule == PipelineSchedule::dualpipe) {
      if (chunk == 0) return {g, stage > 0 ? g - 1 : -1, stage < pp - 1 ? g + 1 : -1, 0};
      return {g, stage < pp - 1 ? g + 1 : -1, stage > 0 ? g - 1 : -1, 1};
    }
    const int last = pp * ctx_.parallel.virtual_stages - 1;
    return {g, g > 0 ? g - 1 : -1, g < last ? g + 1 : -1, 0};
  }

  // What the passes of one rank share.
  struct RankPasses {
    Rank r = 0;
    int stage = 0;
    LayerGroups groups;
    bool split = false;  // zero-bubble schedules and dualpipe: B and W apart
    // Zero-bubble schedules: each layer's B op, by (micro-batch, layer), for its W pass.
    std::map<std::pair<int, int>, OpId> input_grads;
  };
  // Where one pass (a forward or a backward step) stands while it is emitted piece by piece.
  struct PassCursor {
    explicit PassCursor(PipelineCalls::Call call)
        : deps(std::move(call.wait)),
          recv_after(std::move(call.recv_after)),
          received(call.received) {}
    std::vector<OpId> deps;
    std::vector<OpId> recv_after;  // what its receive is posted after (pipeline_calls.hpp)
    OpId received;                 // its receive, where an earlier call posted it
    OpId last = engine::kNone;
    std::array<OpId, 2> earlier = {engine::kNone, engine::kNone};  // backwards before
  };

  void emit_rank(Rank r) {
    const int pp = ctx_.parallel.pp;
    const int m = ctx_.microbatches;
    RankPasses rp;
    rp.r = r;
    rp.stage = layout_.coords(r).pp;
    if (ctx_.parallel.tp > 1) rp.groups.tp = groups_.get(layout_.tp_group(r), "tp");
    rp.groups.tp_stream = tp_stream_;
    if (ctx_.parallel.ep > 1) rp.groups.ep = groups_.get(layout_.ep_group(r), "ep");
    if (ctx_.parallel.cp > 1) {
      rp.groups.cp = groups_.get(layout_.cp_group(r), "cp");
      rp.groups.cp_stream = cp_stream_;
    }
    data_parallel_->begin_rank(r, optimizer_[r]);
    rp.split = splits_backward(ctx_.parallel.schedule);

    const ParallelConfig& par = ctx_.parallel;
    const auto steps =
        pipeline_order(par.schedule, rp.stage, pp, m, par.chunks_per_rank(), par.microbatch_group);
    calls_.begin_rank(steps);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const PipelineStep& step = steps[i];
      if (step.forward && step.paired && i + 1 < steps.size()) {
        // Dualpipe's F&B pair: the two passes' pieces alternate on the compute stream, each
        // one's all-to-alls beside the other's compute (docs/dualpipe.md). Cut
        // at MoE all-to-alls, B leads (DeepSeek-V3's Figure 4: B's combine-grad beside F's
        // attention, F's dispatch beside B's experts, ...); uncut, F runs, then B.
        auto fc = call_before(rp, steps, i), bc = call_before(rp, steps, i + 1);
        calls_.start_passes();
        PassSegments f = forward_pass(rp, step, true, std::move(fc));
        PassSegments bw = backward_pass(rp, steps[++i], true, std::move(bc));
        if (ep_stream_ != 0)
          interleave_passes(bw, f);
        else
          interleave_passes(f, bw);
        calls_.ended_pass(step.forward, b_.last_on(r, compute_));
        calls_.ended_pass(steps[i].forward, b_.last_on(r, compute_));
      } else if (step.weight) {
        // A W's own call (DualPipe's _weight_chunk) may post a later pass's receive.
        std::vector<OpId> received;
        post_early_receives(rp, steps, i, calls_.call_point(b_.last_on(r, compute_)), received);
        weight_pass(rp, step, received);
        // Under DualPipe a W ends a chunk: its B's, or its own; the next call follows it.
        if (calls_.defers_sends()) calls_.ended_chunk(b_.last_on(r, compute_));
      } else {
        auto call = call_before(rp, steps, i);
        calls_.start_passes();
        if (step.forward)
          forward_pass(rp, step, false, std::move(call)).run_all();
        else
          backward_pass(rp, step, false, std::move(call)).run_all();
        calls_.ended_pass(step.forward, b_.last_on(r, compute_));
      }
      // A chunk ends unless the next step runs in it (DualPipe: a full backward's B and W;
      // Megatron's interleaved calls without overlap: a steady forward and its backward).
      if (i + 1 >= steps.size() || !steps[i + 1].in_chunk_before) end_chunk(r, steps[i].send_held);
    }
    end_chunk(r, false);
    if (deepspeed_) deepspeed_->finish(r, rp.stage, stage_rank(r, rp.stage == 0 ? pp - 1 : 0));
    emit_optimizer(r, calls_.outstanding_sends());
  }

  // The call before step i: what it waits for, including the receives it posts for later passes;
  // and the receive of step i if an earlier call posted it.
  PipelineCalls::Call call_before(const RankPasses& rp, const std::vector<PipelineStep>& steps,
                                  std::size_t i) {
    const OpId last = b_.last_on(rp.r, compute_);
    PipelineCalls::Call call = calls_.before_pass(steps[i].forward, last);
    call.received = calls_.early_receive(i);
    post_early_receives(rp, steps, i, calls_.call_point(last), call.wait);
    return call;
  }
  // Posts, after `after`, the receives of later passes that step i's call posts. Where the calls
  // block (DualPipe's _commit_and_wait_comm, Megatron's batch_isend_irecv and wait) the compute
  // after the call waits for them too (`wait`); under overlap_p2p_comm only their pass does.
  void post_early_receives(const RankPasses& rp, const std::vector<PipelineStep>& steps,
                           std::size_t i, OpId after, std::vector<OpId>& wait) {
    for (const std::size_t j : calls_.receives_posted_at(i)) {
      std::vector<OpId> recv_after;
      if (after != engine::kNone) recv_after.push_back(after);
      const OpId got =
          emit_boundary_recv(rp.r, steps[j], place(rp.stage, steps[j].chunk), recv_after);
      if (got == engine::kNone) continue;
      calls_.posted_early(j, got);
      if (calls_.defers_sends()) wait.push_back(got);
    }
  }

  // Tags tell the micro-batch, the receiving chunk and the direction apart on one pair of ranks.
  std::uint32_t tag_of(const PipelineStep& step, int receiver, bool forward) const {
    const int chunks = ctx_.parallel.pp * ctx_.parallel.chunks_per_rank();
    return static_cast<std::uint32_t>((step.microbatch * chunks + receiver) * 2 +
                                      (forward ? 0 : 1));
  }
  // Whether `paired` cuts layer l at its all-to-alls (an MoE block in a dualpipe F&B pair).
  bool cut_at_all_to_all(bool paired, int l) const {
    return paired && ep_stream_ != 0 &&
           ctx_.layers[static_cast<std::size_t>(l)].role == LayerRole::moe;
  }

  // A pass's point-to-point transfers at its chunk's boundaries: a forward receives the
  // activations of the chunk before it and sends its own on; a backward receives the gradient of
  // its output from the chunk after it and sends its input's back. Each carries the output of the
  // chunk upstream of the boundary.
  void add_boundary_recv(PassSegments& out, const std::shared_ptr<PassCursor>& cur, Rank r,
                         const PipelineStep& step, const ChunkPlace& at, engine::GroupId tp) {
    out.add([this, cur, r, step, at, tp] {
      const int peer = step.forward ? at.prev : at.next;
      if (deepspeed_) {  // blocking, on the compute stream, in TrainSchedule's order
        const auto got = deepspeed_->receive(
            r, step.forward,
            peer < 0 ? -1 : static_cast<long>(stage_rank(r, peer % ctx_.parallel.pp)),
            peer < 0 ? 0 : boundary_bytes(step.forward ? at.prev : at.g),
            tag_of(step, at.g, step.forward), static_cast<std::uint32_t>(step.microbatch), tp);
        cur->deps.insert(cur->deps.end(), got.begin(), got.end());
        return false;
      }
      if (peer < 0) return false;
      const auto mb = static_cast<std::uint32_t>(step.microbatch);
      const OpId got = cur->received != engine::kNone
                           ? cur->received
                           : emit_boundary_recv(r, step, at, cur->recv_after);
      if (!tp_.gathers_boundary()) {
        cur->deps.push_back(got);
        return false;
      }
      // parallel.pp_scatter_gather: the TP ranks' shards become the whole tensor (Megatron-LM's
      // gather_split_1d_tensor, on the current stream).
      const OpId after[] = {got};
      cur->deps.push_back(b_.collective(
          {r, compute_, Category::pp_comm, step.forward ? "gather act" : "gather grad", mb, after},
          engine::CollectiveType::all_gather, tp, tp_.boundary_gathered_bytes()));
      return false;
    });
  }
  // The receive of a pass at its chunk's boundary, posted after `after` (kNone: no stage before).
  OpId emit_boundary_recv(Rank r, const PipelineStep& step, const ChunkPlace& at,
                          std::span<const OpId> after) {
    const int peer = step.forward ? at.prev : at.next;
    if (peer < 0) return engine::kNone;
    const auto d = static_cast<std::size_t>(at.direction);
    return b_.recv({r, step.forward ? recv_fwd_[d] : recv_bwd_[d], Category::pp_comm,
                    step.forward ? "recv act" : "recv grad",
                    static_cast<std::uint32_t>(step.microbatch), after},
                   stage_rank(r, peer % ctx_.parallel.pp),
                   boundary_bytes(step.forward ? at.prev : at.g), tag_of(step, at.g, step.forward));
  }
  void add_boundary_send(PassSegments& out, const std::shared_ptr<PassCursor>& cur, Rank r,
                         const PipelineStep& step, const ChunkPlace& at) {
    out.add([this, cur, r, step, at] {
      const int peer = step.forward ? at.next : at.prev;
      if (peer < 0) return false;
      if (deepspeed_) {
        deepspeed_->send(r, step.forward, stage_rank(r, peer % ctx_.parallel.pp),
                         boundary_bytes(step.forward ? at.g : at.prev),
                         tag_of(step, peer, step.forward),
                         static_cast<std::uint32_t>(step.microbatch));
        return false;
      }
      const auto d = static_cast<std::size_t>(at.direction);
      const PipelineSend send{r,
                              step.forward ? send_fwd_[d] : send_bwd_[d],
                              step.forward ? "send act" : "send grad",
                              static_cast<std::uint32_t>(step.microbatch),
                              stage_rank(r, peer % ctx_.parallel.pp),
                              boundary_bytes(step.forward ? at.g : at.prev),
                              tag_of(step, peer, step.forward)};
      if (calls_.defers_sends())
        calls_.defer(send);  // posted at the end of the chunk (end_chunk)
      else
        calls_.sent(step.forward, emit_send(send, cur->last));
      return false;
    });
  }

  OpId emit_send(const PipelineSend& s, OpId after_op) {
    const OpId after[] = {after_op};
    return b_.send({s.r, s.stream, Category::pp_comm, s.name, s.microbatch, after}, s.peer, s.bytes,
                   s.tag);
  }
  // DualPipe: a chunk has ended on rank r's compute stream; its call posts the sends due.
  void end_chunk(Rank r, bool hold) {
    if (!calls_.defers_sends()) return;
    const OpId last = b_.last_on(r, compute_);
    for (const PipelineSend& s : calls_.end_chunk(hold))
      calls_.posted(emit_send(s, last));
  }

  // A forward step receives the previous chunk's activations, runs its layers and sends the
  // result on. `paired`: cut where MoE blocks' all-to-alls go in flight on the EP stream.
  PassSegments forward_pass(RankPasses& rp, const PipelineStep& step, bool paired,
                            PipelineCalls::Call call) {
    const Rank r = rp.r;
    const ChunkPlace at = place(rp.stage, step.chunk);
    const int g = at.g;
    const auto mb = static_cast<std::uint32_t>(step.microbatch);
    auto cur = std::make_shared<PassCursor>(std::move(call));
    PassSegments out(!paired);  // alone: each unit runs as it is added
    add_boundary_recv(out, cur, r, step, at, rp.groups.tp);
    const bool a2a = ctx_.parallel.ep > 1;
    for (int l : ctx_.chunks[static_cast<std::size_t>(g)]) {
      if (cut_at_all_to_all(paired, l)) {
        for (int phase = 0; phase < 3; ++phase)
          out.add([this, &rp, cur, g, l, mb, r, phase, a2a] {
            if (phase == 0) data_parallel_->before_layer(g, l, true, mb, cur->deps);
            if (const OpId op = tp_.moe_forward_phase(b_, r, compute_, ep_stream_, rp.groups, l, mb,
                                                      cur->deps, phase);
                op != engine::kNone)
              cur->last = op;
            if (phase < 2) return a2a;
            cur->deps.assign(1, cur->last);
            data_parallel_->after_layer(g, l, true, mb, cur->last, engine::kNone);
            offload_activations(r, l, mb, cur->last);
            return false;
          });
        continue;
      }
      out.add([this, &rp, cur, g, l, mb, r] {
        data_parallel_->before_layer(g, l, true, mb, cur->deps);
        cur->last = tp_.forward(b_, r, compute_, rp.groups, l, mb, cur->deps);
        data_parallel_->after_layer(g, l, true, mb, cur->last, engine::kNone);
        offload_activations(r, l, mb, cur->last);
        return false;
      });
    }
    add_boundary_send(out, cur, r, step, at);
    return out;
  }

  // A backward step mirrors the forward with gradients; under a split schedule it leaves each
  // layer's weight gradients to its W step.
  PassSegments backward_pass(RankPasses& rp, const PipelineStep& step, bool paired,
                             PipelineCalls::Call call) {
    const Rank r = rp.r;
    const ChunkPlace at = place(rp.stage, step.chunk);
    const int g = at.g;
    const auto mb = static_cast<std::uint32_t>(step.microbatch);
    auto cur = std::make_shared<PassCursor>(std::move(call));
    PassSegments out(!paired);  // alone: each unit runs as it is added
    add_boundary_recv(out, cur, r, step, at, rp.groups.tp);
    const bool a2a = ctx_.parallel.ep > 1;
    const auto& layers = ctx_.chunks[static_cast<std::size_t>(g)];
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      const int l = *it;
      // The layer's backward ended in cur->last, its weight gradients in `weight_grads`.
      auto finish = [this, &rp, cur, g, l, mb, step](OpId weight_grads) {
        cur->earlier = {cur->last, cur->earlier[0]};
        if (rp.split)
          rp.input_grads[{step.microbatch, l}] = cur->last;
        else
          data_parallel_->after_layer(g, l, false, mb, cur->last, weight_grads);
      };
      if (cut_at_all_to_all(paired, l)) {
        for (int phase = 0; phase < 3; ++phase)
          out.add([this, &rp, cur, g, l, mb, r, phase, a2a, finish] {
            if (phase == 0) {
              data_parallel_->before_layer(g, l, false, mb, cur->deps);
              reload_activations(r, l, mb, cur->earlier[1], cur->deps);
            }
            if (const OpId op = tp_.moe_backward_phase(b_, r, compute_, ep_stream_, rp.groups, l,
                                                       mb, cur->deps, phase, rp.split);
                op != engine::kNone)
              cur->last = op;
            if (phase < 2) return a2a;
            cur->deps.assign(1, cur->last);
            finish(cur->last);
            return false;
          });
        continue;
      }
      out.add([this, &rp, cur, g, l, mb, r, finish] {
        OpId weight_grads = engine::kNone;
        data_parallel_->before_layer(g, l, false, mb, cur->deps);
        reload_activations(r, l, mb, cur->earlier[1], cur->deps);
        cur->last =
            tp_.backward(b_, r, compute_, rp.groups, l, mb, cur->deps, &weight_grads, rp.split);
        finish(weight_grads);
        return false;
      });
    }
    add_boundary_send(out, cur, r, step, at);
    return out;
  }

  // W: the weight gradients the B pass left, in the B pass's layer order; only now are they
  // ready for the data-parallel reduction (an MoE block's: its shared experts', experts' and
  // router's).
  void weight_pass(RankPasses& rp, const PipelineStep& step, std::span<const OpId> received) {
    const ChunkPlace at = place(rp.stage, step.chunk);
    const auto& layers = ctx_.chunks[static_cast<std::size_t>(at.g)];
    const auto mb = static_cast<std::uint32_t>(step.microbatch);
    // The first waits for the sends of the pass before, as any compute after their call, and
    // for the receives its call posted.
    std::vector<OpId> after(calls_.due_sends().begin(), calls_.due_sends().end());
    after.insert(after.end(), received.begin(), received.end());
    for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
      after.push_back(rp.input_grads.at({step.microbatch, *l}));
      const OpId w = tp_.weight_gradients(b_, rp.r, compute_, *l, mb, after);
      after.clear();
      data_parallel_->after_layer(at.g, *l, false, mb, w, w);
    }
  }

  void offload_activations(Rank r, int l, std::uint32_t mb, OpId forward) {
    if (activations_) activations_->offload(r, l, mb, forward);
  }
  void reload_activations(Rank r, int l, std::uint32_t mb, OpId two_before,
                          std::vector<OpId>& deps) {
    if (activations_) activations_->reload(r, l, mb, two_before, deps);
  }

  // The optimizer step waits for every gradient reduction of the data-parallel strategy, and for
  // the last pass's `sends`.
  void emit_optimizer(Rank r, std::span<const OpId> sends) {
    std::vector<OpId> reduce_ops = data_parallel_->gradient_ops();
    const int pp = ctx_.parallel.pp, st = layout_.coords(r).pp;
    const auto stage = static_cast<std::size_t>(st);
    if (const auto stage_bytes = replicated_grad_bytes_[stage]; stage_bytes > 0)
      reduce_ops = {b_.collective({r, compute_, Category::tp_comm, "tp all_reduce replicated grads",
                                   engine::kNone, reduce_ops},
                                  engine::CollectiveType::all_reduce,
                                  groups_.get(layout_.tp_group(r), "tp"), stage_bytes)};
    const double params = data_parallel_->optimizer_params();
    if (ctx_.parallel.schedule == PipelineSchedule::dualpipe)
      reduce_ops = {sum_copies(r, reduce_ops, params)};
    else if (!deepspeed_ && reduces_tied_embedding(ctx_, st))  // Megatron's, after those
      reduce_ops = {tied_embedding_grad_all_reduce(
          ctx_, sink_, r, st, stage_rank(r, st == 0 ? pp - 1 : 0), compute_, reduce_ops)};
    if (ctx_.parallel.offload.optimizer) {
      const OpId up = emit_offloaded_optimizer(
          b_, ctx_.training, r, {compute_, to_host_, host_, from_host_}, reduce_ops, params, sends);
      optimizer_[r] = up;
      data_parallel_->after_optimizer(up);
      return;
    }
    reduce_ops.insert(reduce_ops.end(), sends.begin(), sends.end());
    const OpId step = b_.compute(
        {r, compute_, Category::optimizer, "optimizer step", engine::kNone, reduce_ops},
        params * kOptimizerFlopsPerParam,
        static_cast<std::uint64_t>(params * optimizer_step_bytes_per_param(ctx_.training)),
        static_cast<std::uint8_t>(Precision::fp32),
        kernels_.optimizer(params, stage_tensors_[stage]));
    optimizer_[r] = step;
    data_parallel_->after_optimizer(step);
  }

  // DualPipe: ranks s and pp − 1 − s hold the same two stages, one copy for each direction, and
  // add each other's gradients before either steps (as deepseek-ai/DualPipe's example does): an
  // all-reduce over the pair of the gradients this rank's optimizer steps, after its own
  // data-parallel reduction.
  OpId sum_copies(Rank r, const std::vector<OpId>& reduced, double params) {
    return pair_all_reduce(sink_, r, stage_rank(r, ctx_.parallel.pp - 1 - layout_.coords(r).pp),
                           compute_, "dualpipe copies grad all-reduce", "dualpipe",
                           static_cast<std::uint64_t>(params * ctx_.gradient_bytes()), reduced);
  }

  BuiltSchedule& out_;
  RankLayout layout_;
  PlanContext ctx_;
  int iterations_ = 1;
  engine::ScheduleBuilder b_;
  ProcessGroups groups_;
  ScheduleSink sink_;
  LayerKernels kernels_;  // before tp_, which names its lists
  TensorParallelism tp_;
  PipelineCalls calls_;  // the rank being emitted's pipeline calls
  std::vector<std::uint64_t> stage_tensors_;
  std::vector<std::uint64_t> replicated_grad_bytes_;  // per stage, the TP all-reduce's bytes
  std::unique_ptr<DataParallelStrategy> data_parallel_;
  engine::StreamId compute_ = 0;
  engine::StreamId cp_stream_ = 0;
  engine::StreamId tp_stream_ = 0;  // TP collectives beside compute (0: none)
  engine::StreamId ep_stream_ = 0;  // dualpipe's F&B pairs: the MoE all-to-alls (0: none)
  // parallel.offload.optimizer: the copies to and from host memory and the CPU's step
  engine::StreamId to_host_ = 0, host_ = 0, from_host_ = 0;
  std::unique_ptr<ActivationOffload> activations_;  // parallel.offload.activations
  std::unique_ptr<DeepSpeedPipe> deepspeed_;        // parallel.pipeline_engine: deepspeed
  // Per direction (index 1: dualpipe's reverse direction; the same streams otherwise).
  std::array<engine::StreamId, 2> recv_fwd_{}, send_fwd_{}, recv_bwd_{}, send_bwd_{};
  std::vector<OpId> optimizer_;  // per rank: its latest optimizer step
  std::unique_ptr<ReplicaStamper> stamper_;
};

}  // namespace

BuiltSchedule build_schedule(const Scenario& sc, bool fold_data_parallel,
                             const std::function<void(double)>& progress, bool stamp_replicas) {
  BuiltSchedule out;
  out.layers = expand_model(sc.model, std::max(1, sc.training.seq_len));
  out.partition = partition_layers(sc.parallel, out.layers);
  PlanComposer composer(sc, out, fold_data_parallel, stamp_replicas);
  out.schedule = composer.build(progress);
  return out;
}

}  // namespace clustersim::models
