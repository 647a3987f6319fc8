#include "models/plan_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "models/offload.hpp"

namespace clustersim::models {

namespace {

// NCCL's bus bandwidth as a share of a link's figure (the scenario's defaults, docs/network.md).
constexpr double kNvlinkEfficiency = 0.8;
constexpr double kNicEfficiency = 0.95;
constexpr double kLatency_s = 5e-6;  // per ring step: NCCL's α for one hop, order of magnitude
// GEMMs lose efficiency when their dimensions are small (tiles and waves underfilled): a
// saturating factor n/(n + kHalfEfficiencyDim) per dimension, a coarse stand-in for the kernel
// model's tile quantization (models/kernels/) that the flow re-simulation then replaces.
constexpr double kHalfEfficiencyDim = 128;
constexpr double kAdamBytesPerParam = 16 * 2;  // fp32 master, m, v, gradient: read and written

struct Bandwidths {
  double intra = 0;  // per GPU inside a node, bytes/s
  double inter = 0;  // per GPU between nodes
};

Bandwidths bandwidths(const Scenario& s) {
  const auto& node = s.cluster.topology.node;
  Bandwidths bw;
  if (node.fabric == engine::IntraNodeFabric::nvswitch)
    bw.intra = node.nvlink_bandwidth.bytes_per_second() * kNvlinkEfficiency;
  else  // a ring over PCIe crosses the CPUs' link once each way
    bw.intra = std::min(node.pcie_bandwidth.bytes_per_second(),
                        node.cpus > 1 ? node.cpu_interconnect_bandwidth.bytes_per_second()
                                      : node.pcie_bandwidth.bytes_per_second());
  const double nic = node.nic_bandwidth.bytes_per_second() * node.nics / node.gpus;
  bw.inter = nic * kNicEfficiency / std::max(1.0, s.cluster.topology.fabric.oversubscription);
  if (s.cluster.nodes == 1) bw.inter = bw.intra;
  return bw;
}

// A group of `size` ranks `stride` apart stays inside one node when it spans at most a node.
double group_bandwidth(const Scenario& s, const Bandwidths& bw, int size, long stride) {
  return static_cast<long>(size) * stride <= s.cluster.topology.node.gpus ? bw.intra : bw.inter;
}

double ring_all_reduce_s(double bytes, int n, double bw) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * kLatency_s;
}

double one_way_collective_s(double bytes, int n, double bw) {  // all-gather, reduce-scatter
  if (n <= 1) return 0;
  return static_cast<double>(n - 1) / n * bytes / bw + (n - 1) * kLatency_s;
}

double saturation(double n) {
  return n / (n + kHalfEfficiencyDim);
}

}  // namespace

PlanModelFigures plan_model_figures(const Scenario& scenario) {
  PlanModelFigures f;
  const std::vector<LayerCost> layers = expand_model(scenario.model, scenario.training.seq_len);
  int last_block = -1;
  for (const LayerCost& l : layers) {
    f.model_flops += l.forward_flops + l.backward_flops;
    switch (l.role) {
      case LayerRole::embedding:
      case LayerRole::head:
        f.edge_forward_flops += l.forward_flops;
        f.edge_params += l.params;
        break;
      case LayerRole::generic:
        ++f.blocks;
        f.block_forward_flops += l.forward_flops;
        f.block_params += l.params;
        break;
      default:
        if (l.block != last_block) ++f.blocks;
        last_block = l.block;
        f.block_forward_flops += l.forward_flops;
        if (l.role == LayerRole::moe) ++f.moe_blocks;
        for (const ParamTensor& t : l.tensors)
          (t.role == TensorRole::expert ? f.block_expert_params : f.block_params) += t.count;
    }
  }
  f.blocks = std::max(f.blocks, 1);
  f.block_forward_flops /= f.blocks;
  f.block_params /= f.blocks;
  if (f.moe_blocks > 0) f.block_expert_params /= f.moe_blocks;
  if (const auto* t = std::get_if<TransformerSpec>(&scenario.model.body)) {
    f.transformer = true;
    f.hidden = static_cast<double>(t->hidden_size);
    const double s = scenario.training.seq_len;
    f.attention_core_flops = 4 * s * s * f.hidden;
    if (t->moe) f.top_k = t->moe->top_k;
  }
  return f;
}

PlanEstimate estimate_plan(const Scenario& s, const PlanModelFigures& f) {
  const ParallelConfig& p = s.parallel;
  const GpuSpec& gpu = s.cluster.gpu;
  const Bandwidths bw = bandwidths(s);
  const double b = s.training.micro_batch;
  const double seq = f.transformer ? s.training.seq_len : 1;
  const double m = static_cast<double>(s.num_microbatches());
  const double elem = stored_element_bytes(s.training.precision);
  const double peak = gpu.peak_flops[static_cast<std::size_t>(s.training.precision)];
  // A transformer on a GPU without kernel figures: the large-GEMM efficiency, the sustained
  // share and the saturating factors. A layer list: the roofline the simulation costs its ops by
  // (models/compute_model.cpp), FLOPs at the GPU's compute efficiency.
  const double achieved = f.transformer
                              ? peak * gpu.compute_efficiency * gpu.sustained_compute_fraction *
                                    saturation(b * seq) * saturation(f.hidden / p.tp)
                              : peak * gpu.compute_efficiency;
  const double blocks_per_stage = std::ceil(static_cast<double>(f.blocks) / p.pp);
  const double moe_per_stage = std::ceil(static_cast<double>(f.moe_blocks) / p.pp);

  PlanEstimate e;
  // Full recompute re-runs every block, or under recompute_method block the first
  // recompute_num_layers of each of the stage's chunks (models/plans/recompute_layers.hpp).
  double recomputed_per_stage = 0;
  if (s.training.recompute == Recompute::full)
    recomputed_per_stage = s.training.recompute_method == RecomputeMethod::block
                               ? std::min(blocks_per_stage, static_cast<double>(p.virtual_stages) *
                                                                s.training.recompute_num_layers)
                               : blocks_per_stage;
  double compute_mb = 0;
  double recompute_mb = 0;
  if (const std::optional<LayerKernelSeconds> k =
          f.kernel_times ? f.kernel_times->get(s) : std::nullopt) {
    // The kernel model, as the simulation costs each op (models/plan_kernel_times.hpp): the
    // stage's blocks (the MoE ones with their expert MLP) and, on one stage, the embedding and
    // the LM head; with pp > 1 the last stage, whose LM head outweighs the first's embedding.
    const double dense_per_stage = std::max(0.0, blocks_per_stage - moe_per_stage);
    compute_mb = blocks_per_stage * (k->attention_forward + k->attention_backward) +
                 dense_per_stage * (k->mlp_forward + k->mlp_backward) +
                 moe_per_stage * (k->moe_forward + k->moe_backward) + k->head_forward +
                 k->head_backward +
                 (p.pp == 1 ? k->embedding_forward + k->embedding_backward : 0.0);
    const double block_forward =
        k->attention_forward + (moe_per_stage > 0 ? k->moe_forward : k->mlp_forward);
    switch (s.training.recompute) {
      case Recompute::none:
        break;
      case Recompute::full:
        recompute_mb = recomputed_per_stage * block_forward;
        break;
      case Recompute::selective:
        recompute_mb = blocks_per_stage * k->attention_core_forward;
        break;
      case Recompute::selective_op:
        recompute_mb = blocks_per_stage * k->elementwise_forward;
        break;
    }
  } else {
    // Per micro-batch on the heaviest stage: its blocks plus the LM head (the last stage).
    const double stage_forward = (blocks_per_stage * f.block_forward_flops +
                                  (p.pp == 1 ? f.edge_forward_flops : f.edge_forward_flops / 2)) *
                                 b / p.tp;
    compute_mb = 3 * stage_forward / achieved;
    if (s.training.recompute == Recompute::full)
      recompute_mb = recomputed_per_stage * f.block_forward_flops * b / p.tp / achieved;
    else if (s.training.recompute != Recompute::none)
      recompute_mb = blocks_per_stage * f.attention_core_flops * b / p.tp / achieved;
  }

  // TP: two all-reduces in forward and two in backward per block (or all-gather + reduce-scatter
  // pairs with sequence parallelism: the same bytes); an extra forward for each block full
  // recompute re-runs.
  const double activation = seq * b * f.hidden * elem;
  const double tp_bw = group_bandwidth(s, bw, p.tp, 1);
  const double tp_collectives = blocks_per_stage * 4 + recomputed_per_stage * 2;
  const double tp_one = ring_all_reduce_s(activation, p.tp, tp_bw);
  // parallel.tp_async_grad_reduce: the two backward reductions of a block run beside the weight
  // gradients of the column-parallel linears (QKV, FC1), about a quarter of the block's backward
  // each (tensor_parallelism.cpp).
  // Under sequence parallelism those linears also re-gather their input beside their data
  // gradients (an all-gather, half a ring all-reduce), each about as long as the weight gradient.
  const bool async =
      p.tp > 1 && p.tp_async_grad_reduce_on() && !p.tp_comm_overlap && blocks_per_stage > 0;
  const double quarter = async ? 0.25 * (compute_mb / 3 * 2) / blocks_per_stage : 0;
  const double hidden = async ? 2 * std::min(tp_one, quarter) : 0;
  const double regather =
      async && p.sequence_parallel ? 2 * std::max(0.0, tp_one / 2 - quarter) : 0;
  const double tp_mb =
      f.transformer ? tp_collectives * tp_one + blocks_per_stage * (regather - hidden) : 0;
  // PP: a micro-batch's activations forward and their gradient back, once per chunk.
  const long pp_stride = static_cast<long>(p.tp) * p.ep * p.dp;
  const double pp_bytes = (f.transformer ? activation : b * 4e6) / (p.sequence_parallel ? p.tp : 1);
  const double pp_mb =
      p.pp > 1 ? 2.0 * p.virtual_stages * pp_bytes / group_bandwidth(s, bw, 2, pp_stride) : 0;
  // EP: dispatch and combine in forward and backward, each token to top_k experts.
  const double ep_bw = group_bandwidth(s, bw, p.ep, p.tp);
  const double ep_mb =
      p.ep > 1 ? moe_per_stage * 4 * one_way_collective_s(activation * f.top_k, p.ep, ep_bw) : 0;
  const double stage_mb = compute_mb + recompute_mb + tp_mb + pp_mb + ep_mb;

  e.compute_s = m * compute_mb;
  e.recompute_s = m * recompute_mb;
  e.tp_s = m * tp_mb;
  e.pp_s = m * pp_mb;
  e.ep_s = m * ep_mb;
  // Zero bubble (Qi et al. 2024): W (a third of the compute, the weight gradients) fills the
  // bubble: ZB-H1 idles (p − 1)(F + B − W), ZB-H2 (p − 1)(F + B − 2W) in the steady state but
  // never less than the last stage's start, (p − 1)·F, in one iteration.
  const double weight_mb = compute_mb / 3;
  if (p.schedule == PipelineSchedule::zb_h1)
    e.bubble_s = (p.pp - 1) * (stage_mb - 2 * weight_mb);
  else if (p.schedule == PipelineSchedule::zb_h2)
    e.bubble_s = (p.pp - 1) * std::max(stage_mb - 3 * weight_mb, compute_mb / 3);
  else if (p.schedule == PipelineSchedule::dualpipe)
    // DeepSeek-V3 Table 2's (p/2 − 1)(F&B + B − 3W), F&B = F + B + W serial, B the input
    // gradients (docs/dualpipe.md).
    e.bubble_s = (p.pp / 2 - 1) * (stage_mb - 2 * weight_mb);
  else
    e.bubble_s = (p.pp - 1) / static_cast<double>(p.virtual_stages) * stage_mb;

  // DP: the rank's gradients (its stage's shard of the dense part, experts also split by ep).
  // DualPipe: two stages per rank, and the two copies' gradients summed over a pair of ranks.
  const double copies = p.schedule == PipelineSchedule::dualpipe ? 2 : 1;
  const double rank_params =
      copies * ((blocks_per_stage * f.block_params + f.edge_params / std::min(p.pp, 2)) / p.tp +
                moe_per_stage * f.block_expert_params / (p.tp * p.ep));
  const double grads = rank_params * elem;
  const long dp_stride = static_cast<long>(p.tp) * p.ep;
  const double dp_bw = group_bandwidth(s, bw, p.dp, dp_stride);
  const double backward_last = 2.0 / 3.0 * compute_mb;
  // HSDP's shard group: parallel.fsdp.shard_group, by default the dp ranks of a node.
  const int hsdp_shard = p.fsdp.shard_group > 0
                             ? p.fsdp.shard_group
                             : std::clamp(s.cluster.topology.node.gpus / p.tp, 1, p.dp);
  switch (p.data_parallel) {
    case DataParallel::ddp:
    case DataParallel::zero1:
    case DataParallel::zero2: {
      const double all_reduce = ring_all_reduce_s(grads, p.dp, dp_bw);
      // Overlapped with the last micro-batch's backward, except the last bucket's.
      const double tail = all_reduce * std::min(1.0, p.bucket_bytes / std::max(grads, 1.0));
      e.dp_s = p.overlap ? std::max(all_reduce - backward_last, tail) : all_reduce;
      break;
    }
    case DataParallel::zero3:
    case DataParallel::fsdp: {
      // All-gather before forward and backward, reduce-scatter after: behind compute with
      // prefetch, exposed only where they take longer than the micro-batch's compute.
      const double per_mb = 3 * one_way_collective_s(grads, p.dp, dp_bw);
      e.dp_s = m * std::max(0.0, per_mb - compute_mb) + per_mb / std::max(blocks_per_stage, 1.0);
      break;
    }
    case DataParallel::hsdp: {
      // Inside the shard group as FSDP (two gathers, a reduce-scatter); each unit's gradient
      // shard then all-reduced across the replicas on the reduce-scatter's stream, every
      // micro-batch unless no_sync defers both to the last (sharded_data_parallel.cpp).
      const int shard = hsdp_shard;
      const double one_way = one_way_collective_s(grads, shard, bw.intra);
      const double across = ring_all_reduce_s(grads / shard, p.dp / shard, bw.inter);
      const double reduce_mb = one_way + across;
      const double backward_mb = 2.0 / 3.0 * compute_mb;
      const double synced = p.fsdp.no_sync ? 1 : m;
      e.dp_s = m * std::max(0.0, 2 * one_way - compute_mb) +
               synced * std::max(0.0, reduce_mb - backward_mb) +
               reduce_mb / std::max(blocks_per_stage, 1.0);
      break;
    }
  }
  const bool sharded_optimizer = p.data_parallel != DataParallel::ddp;
  if (copies > 1)  // the pair's all-reduce of what the optimizer steps, after the DP reduction
    e.dp_s += ring_all_reduce_s(grads / (sharded_optimizer ? p.dp : 1), 2,
                                group_bandwidth(s, bw, 2, pp_stride));
  // The optimizer steps the rank's shard: 1/dp of its parameters, 1/(shard group) under HSDP,
  // whose replicas step the same shard.
  const int shards = !sharded_optimizer                      ? 1
                     : p.data_parallel == DataParallel::hsdp ? hsdp_shard
                                                             : p.dp;
  e.optimizer_s =
      rank_params / shards * kAdamBytesPerParam / (gpu.hbm_bandwidth * gpu.memory_efficiency);
  if (p.offload.optimizer && sharded_optimizer && gpu.host_memory_bandwidth > 0) {
    // ZeRO-Offload: the shard's copies over the GPU's PCIe link and the CPU step instead
    // (docs/offload.md; the switch uplink's sharing is left to the simulation).
    const OptimizerOffload o = optimizer_offload(s.training, rank_params / p.dp);
    e.optimizer_s = (o.gradients_down + o.params_up) /
                        s.cluster.topology.node.pcie_bandwidth.bytes_per_second() +
                    o.cpu_step_bytes / gpu.host_memory_bandwidth;
  }
  e.iteration_s =
      e.compute_s + e.recompute_s + e.tp_s + e.pp_s + e.ep_s + e.bubble_s + e.dp_s + e.optimizer_s;
  e.bubble_fraction = e.bubble_s / e.iteration_s;
  e.mfu = f.model_flops * static_cast<double>(s.training.global_batch) /
          (static_cast<double>(s.world_size()) * e.iteration_s * peak);
  return e;
}

}  // namespace clustersim::models
