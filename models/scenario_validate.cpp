// The plan's arithmetic, checked once everything is read (docs/scenario.md "Validation"). The
// rules follow Megatron-LM's argument checks, so a plan accepted here is one Megatron would run.
#include <map>

#include "models/kernels/kernel_cost.hpp"
#include "models/offload.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/plan_context.hpp"
#include "models/rank_layout.hpp"
#include "models/scenario_detail.hpp"

namespace clustersim::models::detail {
namespace {

std::string divisors(long n) {
  std::string out;
  for (long d = 1; d <= n; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + str(d);
  return out;
}

void validate_transformer(const Scenario& s, const TransformerSpec& t) {
  const ParallelConfig& p = s.parallel;
  const long stages = static_cast<long>(p.pp) * p.virtual_stages;
  if (p.stage_layers.empty() && t.num_layers % stages != 0) {
    const std::string what = p.virtual_stages > 1 ? "pp · virtual_stages = " + str(p.pp) + " · " +
                                                        str(p.virtual_stages) + " = " + str(stages)
                                                  : "pp = " + str(p.pp);
    s.fail(p.virtual_stages > 1 ? "parallel.virtual_stages" : "parallel.pp",
           "num_layers = " + str(t.num_layers) + " is not divisible by " + what +
               " (every pipeline stage holds the same number of layers); or give "
               "parallel.stage_layers");
  }
  if (t.num_heads % p.tp != 0)
    s.fail("parallel.tp", "tp = " + str(p.tp) + " does not divide num_heads = " + str(t.num_heads) +
                              "; allowed: tp in " + divisors(t.num_heads));
  if (t.num_kv_heads % p.tp != 0)
    s.fail("parallel.tp", "tp = " + str(p.tp) + " does not divide num_kv_heads = " +
                              str(t.num_kv_heads) + "; allowed: tp in " + divisors(t.num_kv_heads));
  if (t.ffn_hidden_size % p.tp != 0)
    s.fail("parallel.tp",
           "tp = " + str(p.tp) + " does not divide ffn_hidden_size = " + str(t.ffn_hidden_size));
  if (p.sequence_parallel && s.training.seq_len % p.tp != 0)
    s.fail("training.seq_len", "seq_len = " + str(s.training.seq_len) +
                                   " is not divisible by tp = " + str(p.tp) +
                                   ", which sequence_parallel requires");
  if (p.ep > 1 && !t.moe)
    s.fail("parallel.ep", "ep = " + str(p.ep) +
                              " needs a mixture-of-experts model; allowed: ep: 1 "
                              "for a dense model");
  if (t.moe && t.moe->num_experts % p.ep != 0)
    s.fail("parallel.ep", "ep = " + str(p.ep) +
                              " does not divide num_experts = " + str(t.moe->num_experts) +
                              "; allowed: ep in " + divisors(t.moe->num_experts));
}

// Context parallelism splits every sequence into 2·cp chunks (two per rank, for causal load
// balance) and runs the attention as Transformer Engine's fused kernel does.
void validate_context_parallel(const Scenario& s, const TransformerSpec& t) {
  const ParallelConfig& p = s.parallel;
  if (p.cp == 1) return;
  // Ulysses hands each CP rank heads / cp of its TP shard's heads: query and KV heads must split.
  if (p.cp_comm == ContextParallelComm::a2a) {
    if (t.mla)
      s.fail("parallel.cp_comm",
             "cp_comm a2a with latent attention (model.mla) is not modelled; allowed: p2p, "
             "all_gather");
    const long heads = t.num_heads, kv_heads = t.num_kv_heads;
    if (heads % (static_cast<long>(p.tp) * p.cp) != 0 ||
        kv_heads % (static_cast<long>(p.tp) * p.cp) != 0)
      s.fail("parallel.cp_comm",
             "cp_comm a2a splits each TP rank's heads over the CP group: tp · cp = " +
                 str(static_cast<long>(p.tp) * p.cp) + " must divide num_heads = " + str(heads) +
                 " and num_kv_heads = " + str(kv_heads) + "; allowed: p2p, all_gather");
  }
  const long chunks = 2L * p.cp * (p.sequence_parallel ? p.tp : 1);
  if (s.training.seq_len % chunks != 0)
    s.fail("training.seq_len", "seq_len = " + str(s.training.seq_len) + " is not divisible by " +
                                   (p.sequence_parallel ? "2 · cp · tp = " : "2 · cp = ") +
                                   str(chunks) +
                                   " (context parallelism splits each sequence into 2 · cp "
                                   "chunks for causal load balance)");
  if (s.training.attention != Attention::flash)
    s.fail("training.attention",
           "context parallelism (cp = " + str(p.cp) +
               ") runs the fused attention kernel on each KV block; allowed: flash");
}

void validate_layers(const Scenario& s, const std::vector<LayerSpec>& layers) {
  const ParallelConfig& p = s.parallel;
  long total = 0;
  for (const LayerSpec& l : layers)
    total += l.repeat;
  const long stages = static_cast<long>(p.pp) * p.virtual_stages;
  if (total < stages)
    s.fail(p.virtual_stages > 1 ? "parallel.virtual_stages" : "parallel.pp",
           "the model has " + str(total) + " layers, fewer than the " + str(stages) +
               " pipeline stages; allowed: pp · virtual_stages <= " + str(total));
  // A generic layer has no shape to split across tensor-parallel ranks or experts.
  if (p.tp > 1) s.fail("parallel.tp", "tensor parallelism needs a transformer model; allowed: 1");
  if (p.ep > 1) s.fail("parallel.ep", "expert parallelism needs a MoE transformer; allowed: 1");
  if (p.sequence_parallel)
    s.fail("parallel.sequence_parallel", "needs a transformer model; allowed: false");
  if (p.cp > 1)
    s.fail("parallel.cp", "context parallelism splits a transformer's sequence; allowed: 1");
  // It used to be accepted and do nothing.
  const Recompute r = s.training.recompute;
  if (r == Recompute::selective || r == Recompute::selective_op)
    s.fail("training.recompute",
           std::string(kRecomputeNames.name(r)) +
               " recompute needs a transformer (it chooses which of a block's ops to recompute; "
               "a generic layer has none); allowed: none | full");
}

// DualPipe (docs/dualpipe.md): two pipelines in opposite directions through pairs
// of ranks s and pp − 1 − s, half the micro-batches fed from each end; the steady phase of rank s
// runs m/2 − pp + min(s, pp − 1 − s) + 1 rounds, at least one only from m = 2·pp on
// (deepseek-ai/DualPipe asserts the same).
void validate_dualpipe(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  if (p.pp % 2 != 0)
    s.fail("parallel.pp",
           "schedule dualpipe pairs rank s with rank pp − 1 − s: needs an even pp, not " +
               str(p.pp) + "; allowed: " + str(p.pp - 1) + " or " + str(p.pp + 1) +
               ", or schedule: zb-h1");
  // ZeRO-2 reduce-scatters each micro-batch's gradients as they come; under dualpipe a bucket
  // mixes two chunks that see different micro-batches, which is not modelled.
  if (p.data_parallel == DataParallel::zero2)
    s.fail("parallel.data_parallel",
           "schedule dualpipe is modelled with ddp and zero1 only (DeepSeek-V3 trains with "
           "ZeRO-1); allowed: ddp, zero1");
  // DualPipe's calls block before every chunk (dualpipe.py's _commit_and_wait_comm): `none`, as
  // `auto` gives; it posts no receive a pass ahead as Megatron's overlap_p2p_comm does.
  if (p.pp_p2p_overlap == P2POverlap::one_pass)
    s.fail("parallel.pp_p2p_overlap",
           "schedule dualpipe makes its own calls (a blocking one before each chunk), not "
           "one_pass; allowed: auto, none, full");
  const long m = s.num_microbatches();
  if (m % 2 != 0 || m < 2L * p.pp)
    s.fail("training.global_batch",
           "schedule dualpipe feeds half the micro-batches from each end and needs an even "
           "micro-batch count >= 2 · pp = " +
               str(2L * p.pp) + ", not " + str(m) +
               " = global_batch / (micro_batch · dp); allowed: global_batch a multiple of " +
               str(2L * s.training.micro_batch * p.dp) +
               " and >= " + str(2L * p.pp * s.training.micro_batch * p.dp));
}

// parallel.stage_layers: the blocks (or list layers) of each pipeline chunk.
void validate_stage_layers(const Scenario& s, long units, bool transformer) {
  const ParallelConfig& p = s.parallel;
  if (p.stage_layers.empty()) return;
  const long chunks = static_cast<long>(p.pp) * p.virtual_stages;
  if (static_cast<long>(p.stage_layers.size()) != chunks)
    s.fail("parallel.stage_layers", "lists " + str(static_cast<long>(p.stage_layers.size())) +
                                        " stages but pp × virtual_stages is " + str(chunks));
  // A transformer's first chunk may hold the embedding alone and its last the head alone (0
  // blocks: the Llama 3 405B pipeline); every other chunk needs a block or a layer.
  long sum = 0;
  bool positive = true;
  for (std::size_t i = 0; i < p.stage_layers.size(); ++i) {
    const int n = p.stage_layers[i];
    sum += n;
    const bool end = i == 0 || i + 1 == p.stage_layers.size();
    positive = positive && (n >= 1 || (transformer && end && n == 0 && chunks > 1));
  }
  if (sum != units || !positive)
    s.fail("parallel.stage_layers",
           "must give every stage at least one of the model's " + str(units) +
               (transformer ? " blocks (the first and last may give 0: the embedding or the "
                              "head alone)"
                            : " layers") +
               " and add up to that");
}

// training.recompute_method / recompute_num_layers: Megatron-LM's TransformerConfig checks
// (megatron/core/transformer/transformer_config.py @a7c9e8c: with granularity full both are
// required and N lies in 1 .. num_layers / pp; with selective N must be None). Both or neither
// here (neither: uniform groups of one block, what `full` alone means), full only, and N at most
// the blocks of the largest pipeline chunk (a chunk applies N to its own blocks: more would
// recompute every block, which `full` alone says).
void validate_recompute_layers(const Scenario& s, long units, bool transformer) {
  const TrainingConfig& t = s.training;
  if (!t.recompute_method_given && !t.recompute_num_layers_given) return;
  const std::string key =
      t.recompute_method_given ? "training.recompute_method" : "training.recompute_num_layers";
  if (t.recompute != Recompute::full)
    s.fail(key,
           "recompute_method and recompute_num_layers choose which blocks full recompute "
           "checkpoints; training.recompute is " +
               std::string(kRecomputeNames.name(t.recompute)) +
               "; allowed: recompute: full, or leave both keys out");
  if (!t.recompute_method_given || !t.recompute_num_layers_given)
    s.fail(key, std::string("give training.") +
                    (t.recompute_method_given ? "recompute_num_layers" : "recompute_method") +
                    " too (Megatron-LM requires both with full recompute); allowed: "
                    "recompute_method: uniform | block with recompute_num_layers: N >= 1");
  const ParallelConfig& p = s.parallel;
  long most = 0;  // blocks (list layers) of the largest pipeline chunk
  if (!p.stage_layers.empty())
    for (const int n : p.stage_layers)
      most = std::max<long>(most, n);
  else
    most = transformer ? units / (static_cast<long>(p.pp) * p.virtual_stages) : units;
  if (t.recompute_num_layers > most)
    s.fail("training.recompute_num_layers",
           "recompute_num_layers = " + str(t.recompute_num_layers) + " exceeds the " + str(most) +
               (transformer ? " blocks" : " layers") +
               " of the largest pipeline chunk (Megatron-LM applies it to each chunk's "
               "blocks); allowed: 1 .. " +
               str(most) +
               ", or recompute: full without recompute_method to recompute every block");
}

// Kept gathered from a backward into the next forward only to be freed after that forward would
// be an all-gather saved and none spent: the pair only makes sense together.
void validate_fsdp_resharding(const Scenario& s) {
  const FsdpConfig& f = s.parallel.fsdp;
  if (!f.reshard_after_backward && f.reshard_after_forward)
    s.fail("parallel.fsdp.reshard_after_backward",
           "false needs reshard_after_forward: false (parameters kept gathered across "
           "micro-batches stay gathered through each forward too)");
  // DeepSpeed's engine asserts that no_sync "is incompatible with gradient partitioning logic of
  // ZeRO stage 3": its partitioned gradients are reduced every micro-batch.
  if (f.no_sync && s.parallel.data_parallel == DataParallel::zero3)
    s.fail("parallel.fsdp.no_sync",
           "true is not available with zero3 (DeepSpeed reduces partitioned gradients every "
           "micro-batch); use data_parallel: fsdp for PyTorch FSDP's no_sync()");
  // Building the whole model on the GPU and then wrapping it is PyTorch FSDP's start-up;
  // DeepSpeed's zero.Init partitions parameters as they are created.
  const DataParallel d = s.parallel.data_parallel;
  if (f.init == FsdpInit::device && d != DataParallel::fsdp && d != DataParallel::hsdp)
    s.fail("parallel.fsdp.init",
           std::string("device is PyTorch FSDP's start-up (the model built whole on each GPU, "
                       "then wrapped); this scenario's data_parallel is ") +
               std::string(kDataParallelNames.name(d)) + "; allowed with fsdp or hsdp");
  // The root unit holds the embedding and the head, which a pipeline puts on different stages.
  if (f.root_unit && s.parallel.pp > 1)
    s.fail("parallel.fsdp.root_unit",
           "true needs pp: 1 (the embedding and the head sit on different pipeline stages)");
}

// HSDP shards inside groups of shard_group consecutive members of each dp group (by default, the
// members on one node): the size must divide every dp group.
void validate_hsdp(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  if (p.data_parallel != DataParallel::hsdp || p.replicas() <= 1) return;
  const RankLayout layout = rank_layout(p);
  const int gpus = s.cluster.topology.node.gpus;
  std::vector<bool> seen(static_cast<std::size_t>(s.world_size()), false);
  for (engine::Rank r = 0; r < static_cast<engine::Rank>(s.world_size()); ++r) {
    if (seen[r]) continue;
    const auto dp = layout.dp_group(r);
    for (engine::Rank x : dp)
      seen[x] = true;
    std::map<int, long> per_node;  // node -> members of this dp group on it
    for (engine::Rank x : dp)
      ++per_node[static_cast<int>(x) / gpus];
    for (const auto& [node, count] : per_node) {
      const long size = p.fsdp.shard_group > 0 ? p.fsdp.shard_group : count;
      if (static_cast<long>(dp.size()) % size != 0)
        s.fail("parallel.fsdp.shard_group",
               "shard_group = " + str(size) + " does not divide dp = " +
                   str(static_cast<long>(dp.size())) + "; allowed: a divisor of dp");
    }
  }
}

// Userbuffers overlap the sequence-parallel collectives only, through CUDA IPC buffers shared
// by the GPUs of one node.
void validate_tp_comm_overlap(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  if (!p.tp_comm_overlap) return;
  if (p.tp <= 1 || !p.sequence_parallel) {
    s.fail("parallel.tp_comm_overlap",
           "TP communication overlap needs tp > 1 and sequence_parallel: true (it overlaps the "
           "sequence-parallel all-gathers and reduce-scatters), not tp = " +
               str(p.tp) + (p.sequence_parallel ? "" : " without sequence_parallel") +
               "; allowed: false");
    return;
  }
  const RankLayout layout = rank_layout(p);
  const int gpus = s.cluster.topology.node.gpus;
  for (engine::Rank r = 0; r < static_cast<engine::Rank>(s.world_size());
       r += static_cast<engine::Rank>(p.tp)) {
    const auto group = layout.tp_group(r);
    for (engine::Rank x : group)
      if (static_cast<int>(x) / gpus != static_cast<int>(r) / gpus)
        s.fail("parallel.tp_comm_overlap",
               "TP communication overlap needs each TP group inside one node (userbuffers are "
               "shared over NVLink), but the TP group of rank " +
                   str(static_cast<long>(r)) + " spans nodes; keep tp <= gpus per node (" +
                   str(gpus) + ") and tp fastest in parallel.order, or set false");
  }
}

// PyTorch DDP's constructor options and its Join context belong to DDP only.
// parallel.pipeline_engine: deepspeed models DeepSpeed's PipelineEngine (docs/parallelism.md
// "DeepSpeed's pipeline engine"): its TrainSchedule is 1F1B-ordered, it exists only with
// pipeline parallelism, and it refuses ZeRO stages 2 and 3 (pipe/engine.py asserts "ZeRO-2 and
// ZeRO-3 are incompatible with pipeline parallelism").
void validate_pipeline_engine(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  if (p.pipeline_engine != PipelineEngine::deepspeed) return;
  if (p.pp_scatter_gather)
    s.fail("parallel.pp_scatter_gather",
           "DeepSpeed's pipeline engine partitions its sends over TP itself (PartitionedTensor); "
           "allowed: false, or pipeline_engine: megatron");
  if (p.pp_p2p_overlap != P2POverlap::automatic)
    s.fail("parallel.pp_p2p_overlap",
           "DeepSpeed's pipeline engine blocks its compute stream on every send and receive, not " +
               std::string(kP2POverlapNames.name(p.pp_p2p_overlap)) +
               "; allowed: auto, or pipeline_engine: megatron");
  if (p.pp < 2)
    s.fail("parallel.pipeline_engine",
           "DeepSpeed's pipeline engine needs pipeline parallelism (pp >= 2, not " + str(p.pp) +
               "); allowed: megatron");
  if (p.schedule != PipelineSchedule::one_f_one_b)
    s.fail("parallel.schedule", "DeepSpeed's pipeline engine runs its TrainSchedule (1F1B), not " +
                                    std::string(kPipelineScheduleNames.name(p.schedule)) +
                                    "; allowed: 1f1b, or pipeline_engine: megatron");
  if (p.data_parallel != DataParallel::ddp && p.data_parallel != DataParallel::zero1)
    s.fail("parallel.data_parallel",
           "DeepSpeed's pipeline engine allows ZeRO stage 0 or 1 only, not " +
               std::string(kDataParallelNames.name(p.data_parallel)) + "; allowed: ddp, zero1");
}

void validate_ddp_options(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  if (p.data_parallel == DataParallel::ddp) return;
  const std::string strategy(kDataParallelNames.name(p.data_parallel));
  for (const auto& [key, set] :
       {std::pair{"find_unused_parameters", p.find_unused_parameters},
        std::pair{"static_graph", p.static_graph}, std::pair{"join", p.join}})
    if (set)
      s.fail(std::string("parallel.") + key,
             std::string(key) + " is an option of PyTorch DDP (data_parallel: ddp), not of " +
                 strategy + "; allowed: false");
}

// training.attention: resolved to its default when not given; flash needs a 16-bit or fp8
// precision and, on a GPU the kernel model costs, the GPU's fused-attention figures.
void validate_attention(Scenario& s) {
  TrainingConfig& t = s.training;
  // Autocast computes in 16 bits over fp32 parameters: a 16-bit precision names its dtype.
  if (t.amp && t.precision != Precision::fp16 && t.precision != Precision::bf16)
    s.fail("training.amp", "autocast needs training.precision: fp16 | bf16, not " +
                               std::string(to_string(t.precision)));
  if (!t.attention_given) t.attention = default_attention(s.cluster.gpu, t.precision);
  if (t.attention == Attention::standard || !std::holds_alternative<TransformerSpec>(s.model.body))
    return;
  if (t.attention == Attention::flash1 && std::get<TransformerSpec>(s.model.body).mla)
    s.fail("training.attention",
           "FlashAttention 1 needs equal query/key and value head widths, which latent attention "
           "does not have; allowed: standard, flash");
  if (t.precision == Precision::fp32 || t.precision == Precision::tf32)
    s.fail("training.attention",
           "flash attention has no " + std::string(to_string(t.precision)) +
               " kernel (FlashAttention runs fp16, bf16 and fp8); allowed: standard, or "
               "training.precision: bf16 | fp16");
  const GpuSpec& gpu = s.cluster.gpu;
  if (!kernels::has_kernel_figures(gpu)) return;  // costed by the roofline
  for (const auto& [figure, value] :
       {std::pair{"attention_fwd_efficiency", gpu.attention_fwd_efficiency},
        std::pair{"attention_bwd_efficiency", gpu.attention_bwd_efficiency}})
    if (!(value > 0))
      s.fail(t.attention_given ? "training.attention" : "cluster",
             "GPU " + gpu.name + " has no " + figure +
                 " figure, which the flash attention kernel needs; allowed: "
                 "training.attention: standard");
}

// simulation.algorithms: a combination the engine has no plan for used to fail inside the
// simulation, after building ("simulate: ... does not exist"); now it is an error on its key.
void validate_algorithms(const Scenario& s) {
  const auto& topo = s.cluster.topology;
  for (const auto& [type, type_name] : engine::kCollectiveTypeNames.entries()) {
    const engine::Algorithm a = s.simulation.algorithms[static_cast<std::size_t>(type)];
    const std::string key = "simulation.algorithms." + std::string(type_name);
    if (!algorithm_exists(type, a)) {
      std::vector<std::string> allowed;
      for (const auto& [other, name] : engine::kAlgorithmNames.entries())
        if (algorithm_exists(type, other)) allowed.emplace_back(name);
      s.fail(key, std::string(engine::to_string(a)) + " " + std::string(type_name) +
                      " does not exist; allowed: " + yaml::join(allowed, " | "));
    }
    if (a == engine::Algorithm::nvls && !topo.node.nvls)
      s.fail(key, "nvls needs NVSwitch gen 3+ nodes (H100, H200, B200); allowed: auto, ring, tree");
    if (a == engine::Algorithm::collnet && !(topo.fabric.sharp && s.cluster.nodes > 1))
      s.fail(key,
             "collnet needs a SHARP fabric across nodes (cluster.network.sharp: true, nodes > 1); "
             "allowed: auto, ring, tree");
  }
}

}  // namespace

bool algorithm_exists(engine::CollectiveType type, engine::Algorithm a) {
  using engine::Algorithm;
  using engine::CollectiveType;
  // The engine's rules (engine/network/collectives.cpp algorithm_plan, nccl_collectives.cpp
  // check_nccl); tests/models/test_scenario_limits.cpp checks this table against them.
  if (a == Algorithm::automatic) return true;
  if (type == CollectiveType::send_recv || type == CollectiveType::scatter ||
      type == CollectiveType::gather)
    return a == Algorithm::ring || a == Algorithm::direct;
  switch (a) {
    case Algorithm::tree:
    case Algorithm::nvls:
    case Algorithm::collnet:
      return type == CollectiveType::all_reduce;
    case Algorithm::hierarchical:
      return type == CollectiveType::all_reduce || type == CollectiveType::all_gather ||
             type == CollectiveType::reduce_scatter;
    default:
      return true;  // ring, direct
  }
}

void validate(Scenario& s) {
  ParallelConfig& p = s.parallel;
  check_counts(s);
  if (s.workload.from_chakra()) {
    // The traces hold the plan; what is left to check is the cluster and how to simulate it.
    if (s.simulation.iterations != 1)
      s.fail("simulation.iterations",
             "a Chakra workload is the iterations its traces hold; allowed: 1");
    validate_algorithms(s);
    return;
  }
  const int gpus = s.cluster.topology.node.gpus;
  const long world = s.world_size();
  const std::string world_text =
      str(world) + " (" + str(s.cluster.nodes) + " nodes × " + str(gpus) + " GPUs)";
  if (world % p.tp != 0)
    s.fail("parallel.tp", "tp = " + str(p.tp) + " does not divide the world size " + world_text +
                              "; allowed: tp in " + divisors(world));
  if (world % (static_cast<long>(p.tp) * p.pp) != 0)
    s.fail("parallel.pp", "tp · pp = " + str(p.tp) + " · " + str(p.pp) + " = " +
                              str(static_cast<long>(p.tp) * p.pp) +
                              " does not divide the world size " + world_text +
                              "; allowed: pp in " + divisors(world / p.tp));
  const long tp_pp = static_cast<long>(p.tp) * p.pp;
  if (world % (tp_pp * p.cp) != 0)
    s.fail("parallel.cp", "tp · pp · cp = " + str(p.tp) + " · " + str(p.pp) + " · " + str(p.cp) +
                              " = " + str(tp_pp * p.cp) + " does not divide the world size " +
                              world_text + "; allowed: cp in " + divisors(world / tp_pp));
  const int dp = static_cast<int>(world / (tp_pp * p.cp));
  if (p.dp != 0 && p.dp != dp)
    s.fail("parallel.dp", "dp = " + str(p.dp) +
                              " disagrees with world / (tp · pp · cp) = " + str(world) + " / (" +
                              str(p.tp) + " · " + str(p.pp) + " · " + str(p.cp) + ") = " + str(dp) +
                              "; allowed: " + str(dp) + ", or leave dp out");
  p.dp = dp;
  // Megatron: the expert-parallel group is carved out of the data-parallel group.
  if (dp % p.ep != 0)
    s.fail("parallel.ep", "ep = " + str(p.ep) + " does not divide dp = " + str(dp) +
                              " (expert parallelism splits the data-parallel group); allowed: ep "
                              "in " +
                              divisors(dp));
  const long per_step = static_cast<long>(s.training.micro_batch) * dp;
  if (s.training.global_batch % per_step != 0)
    s.fail("training.global_batch", "global_batch = " + str(s.training.global_batch) +
                                        " is not divisible by micro_batch · "
                                        "dp = " +
                                        str(s.training.micro_batch) + " · " + str(dp) + " = " +
                                        str(per_step) + "; allowed: multiples of " + str(per_step));
  check_sizes(s);
  if (p.schedule == PipelineSchedule::interleaved) {
    if (p.pp < 2) s.fail("parallel.pp", "schedule interleaved needs pp >= 2");
    if (p.virtual_stages < 2)
      s.fail("parallel.virtual_stages", "schedule interleaved needs virtual_stages >= 2");
    // Megatron-Core (schedules.py, forward_backward_pipelining_with_interleaving): groups of g
    // micro-batches run through each chunk in turn, pp <= g <= m, and a last, smaller group
    // must still hold pp or more (else "dependency bubbles", which Megatron refuses).
    const long m = s.num_microbatches();
    const long g = p.microbatch_group_size();
    if (p.microbatch_group > 0 && (g < p.pp || g > m))
      s.fail("parallel.microbatch_group_size",
             "microbatch_group_size = " + str(g) + " must lie between pp = " + str(p.pp) +
                 " and the micro-batch count " + str(m) + " (global_batch / (micro_batch · dp))");
    if (m % g != 0 && m % g < p.pp)
      s.fail(p.microbatch_group > 0 ? "parallel.microbatch_group_size" : "training.global_batch",
             "the interleaved schedule runs the micro-batches in groups of " + str(g) +
                 (p.microbatch_group > 0 ? "" : " (pp; parallel.microbatch_group_size)") +
                 " and the last group, " + str(m) + " mod " + str(g) + " = " + str(m % g) +
                 ", holds fewer than pp = " + str(p.pp) + " (" + str(m) +
                 " = global_batch / (micro_batch · dp)); allowed: a micro-batch count that is a "
                 "multiple of the group, or a group that leaves pp or more");
  } else if (splits_backward(p.schedule)) {
    const std::string name(kPipelineScheduleNames.name(p.schedule));
    if (p.pp < 2) s.fail("parallel.pp", "schedule " + name + " needs pp >= 2");
    // The W pass moves each layer's weight gradients after other micro-batches' work: every
    // data-parallel reduction waits for it, and a sharded unit stays gathered from its B to its W
    // (tests/models/test_zero_bubble_fsdp.cpp). MoE blocks split into B (with their all-to-alls)
    // and W (the weight-gradient GEMMs) under every split schedule
    // (tests/models/test_zero_bubble_moe.cpp, docs/dualpipe.md). DualPipe's overlapped pairs are
    // modelled with unsharded parameters only.
    if (p.schedule == PipelineSchedule::dualpipe && p.data_parallel != DataParallel::ddp &&
        p.data_parallel != DataParallel::zero1 && p.data_parallel != DataParallel::zero2)
      s.fail("parallel.data_parallel",
             "schedule " + name +
                 " is modelled with unsharded parameters only; allowed: ddp, zero1, zero2, or "
                 "schedule: 1f1b");
    // Context parallelism's K/V exchange belongs to B (the attention's input gradients); W, the
    // projections' weight gradients, needs none (tests/models/test_zero_bubble_cp.cpp). DualPipe
    // overlaps a pair's passes, which the exchange beside them is not modelled with.
    if (p.cp > 1 && p.schedule == PipelineSchedule::dualpipe)
      s.fail("parallel.cp", "schedule " + name +
                                " is modelled without context parallelism; allowed: cp 1, or "
                                "schedule: 1f1b, zb-h1, zb-h2");
    if (p.schedule == PipelineSchedule::dualpipe) validate_dualpipe(s);
  }
  if (p.schedule != PipelineSchedule::interleaved && p.microbatch_group > 0)
    s.fail("parallel.microbatch_group_size",
           "microbatch_group_size needs schedule: interleaved (it groups micro-batches per "
           "virtual stage)");
  if (p.schedule != PipelineSchedule::interleaved && p.virtual_stages != 1) {
    s.fail("parallel.virtual_stages", "virtual_stages = " + str(p.virtual_stages) +
                                          " needs schedule: interleaved; allowed: 1");
  }
  const auto precision = static_cast<std::size_t>(s.training.precision);
  if (s.cluster.gpu.peak_flops[precision] <= 0.0) {
    std::vector<std::string> supported;
    for (int i = 0; i < kNumPrecisions; ++i)
      if (s.cluster.gpu.peak_flops[static_cast<std::size_t>(i)] > 0.0)
        supported.emplace_back(to_string(static_cast<Precision>(i)));
    s.fail("training.precision",
           "GPU " + s.cluster.gpu.name + " has no " + std::string(to_string(s.training.precision)) +
               " peak FLOP/s figure (its GEMM kernels need one); allowed: " +
               (supported.empty() ? std::string("none: give cluster.gpu.peak_tflops a "
                                                "figure > 0 for this precision")
                                  : yaml::join(supported, " | ")));
  }
  validate_attention(s);
  if (s.parallel.fp8_comm && s.training.precision != Precision::fp8)
    s.fail("parallel.fp8_comm",
           "fp8 communication needs fp8 training (training.precision: fp8), not " +
               std::string(to_string(s.training.precision)) + "; allowed: false");
  if (const auto* t = std::get_if<TransformerSpec>(&s.model.body)) {
    validate_transformer(s, *t);
    validate_context_parallel(s, *t);
    validate_stage_layers(s, t->num_layers, true);
    validate_recompute_layers(s, t->num_layers, true);
  } else {
    const auto& layers = std::get<std::vector<LayerSpec>>(s.model.body);
    validate_layers(s, layers);
    long total = 0;
    for (const LayerSpec& l : layers)
      total += l.repeat;
    validate_stage_layers(s, total, false);
    validate_recompute_layers(s, total, false);
  }
  validate_fsdp_resharding(s);
  validate_hsdp(s);
  validate_tp_comm_overlap(s);
  validate_pipeline_engine(s);
  validate_ddp_options(s);
  validate_offload(s);
  validate_algorithms(s);
}

}  // namespace clustersim::models::detail

namespace clustersim::models {

Attention default_attention(const GpuSpec& gpu, Precision precision) {
  const bool sixteen_bit =
      precision == Precision::bf16 || precision == Precision::fp16 || precision == Precision::fp8;
  const bool ampere_or_later = gpu.peak_flops[static_cast<std::size_t>(Precision::bf16)] > 0 &&
                               kernels::has_kernel_figures(gpu);
  return sixteen_bit && ampere_or_later ? Attention::flash : Attention::standard;
}

}  // namespace clustersim::models
