// A scenario file (DESIGN.md "Scenario file") loaded, defaulted and validated. Everything a
// schedule builder needs is resolved here: presets become specs, units become SI numbers, and the
// plan's arithmetic (world size, dp, micro-batches) is checked. docs/scenario.md documents every
// key and its default.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/names.hpp"
#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/topology_builders.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_families.hpp"
#include "models/model_spec.hpp"
#include "models/published.hpp"

namespace clustersim::models {

struct SourceLocation {
  std::string file;  // the scenario file, or "--set" for an override
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
};

// Bad input. what() reads "FILE:LINE:COL: KEY.PATH: what is wrong; what is allowed".
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ScenarioError(const std::string& what, SourceLocation where, std::string key)
      : std::runtime_error(what), where_(std::move(where)), key_(std::move(key)) {}
  // The parts of what(), for front ends that present them apart (Python's ScenarioError has
  // file, line and key attributes). Empty when the error was built from a message alone.
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  SourceLocation where_;
  std::string key_;
};

// training.recompute (docs/memory.md "Recompute"): none; selective as Megatron-LM defines it (the
// attention core is recomputed); selective_op, torchtitan's op-level policy (matmul and attention
// outputs are kept, every other op is recomputed from them); full (each block keeps its input).
enum class Recompute { none, selective, full, selective_op };
// training.recompute_method with recompute: full, Megatron-LM's --recompute-method
// (TransformerBlock._checkpointed_forward): uniform checkpoints groups of recompute_num_layers
// consecutive blocks of each pipeline chunk (each group keeps its input only, every block is
// recomputed); block checkpoints the first recompute_num_layers blocks of each chunk and keeps
// every activation of the rest. Without the keys: uniform groups of one block.
enum class RecomputeMethod { uniform, block };
// training.optimizer_impl: how the optimizer step runs over the parameters (docs/memory.md
// "What is counted"): one fused kernel per tensor chunk, torch's multi-tensor `foreach` (default on
// CUDA, ~one parameter-sized temporary), or a per-tensor loop.
enum class OptimizerImpl { fused, foreach, for_loop };
enum class Optimizer { adam, adamw, sgd };
// zb_h1, zb_h2: Qi et al.'s zero-bubble schedules (ICLR 2024), each backward split into B (input
// gradients) and W (weight gradients), W filling the bubble (docs/parallelism.md "Zero bubble").
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, zb_h1, zb_h2, dualpipe };
enum class DataParallel { ddp, zero1, zero2, zero3, fsdp, hsdp };
// Which framework runs the pipeline (docs/deepspeed-pipeline.md): Megatron-
// LM's schedules, or DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/, as Megatron-DeepSpeed
// used it): blocking TP-partitioned sends on the compute stream, the tied embedding's gradients
// and the data-parallel reduction after the flush, and BF16_Optimizer's fp32 all-reduce.
enum class PipelineEngine { megatron, deepspeed };
// Which communicator a pipeline's sends are posted on (parallel.pp_send_communicator): `automatic`
// as the framework does (pp_sends_on_group), `pair` a communicator of the two ranks (a lone
// isend), `group` the pipeline group's (batch_isend_irecv).
enum class SendCommunicator { automatic, pair, group };
// When a pipeline's compute waits for its transfers (parallel.pp_p2p_overlap; docs/parallelism.md
// "When the compute waits for a transfer"): `automatic` as the framework does
// (ParallelConfig::pp_p2p_overlap_mode), `none` every call blocks the compute after it (DualPipe:
// its own calls, one before each chunk; interleaved: Megatron's without overlap_p2p_comm, one
// after each steady forward-and-backward pair), `one_pass` receives are posted a pass ahead
// (Megatron's overlap_p2p_comm), `full` receives are posted as early as their stream allows and no
// compute waits for a send (the most overlap).
enum class P2POverlap { automatic, none, one_pass, full };
// How the attention core runs (docs/fidelity.md "Attention"): unfused (QKᵀ, softmax, ·V with the
// s² scores through memory), a fused FlashAttention-2-class kernel, or FlashAttention 1.x called
// through its varlen interface from Megatron's [s, b, h] layout (Megatron-LM's legacy
// FlashSelfAttention).
enum class Attention { standard, flash, flash1 };
// How context parallelism moves K and V (Megatron-Core's --cp-comm-type): p2p passes KV blocks
// around the CP ring, each send overlapped with the attention of the block before; all_gather
// gathers K and V before the attention and reduce-scatters their gradients after it, exposed
// (the Llama 3 paper's variant).
enum class ContextParallelComm { p2p, all_gather, a2a };

// The names a scenario uses for each choice (engine/names.hpp).
inline constexpr engine::NameTable kRecomputeNames{
    std::array<std::pair<Recompute, std::string_view>, 4>{{
        {Recompute::none, "none"},
        {Recompute::selective, "selective"},
        {Recompute::full, "full"},
        {Recompute::selective_op, "selective_op"},
    }}};
inline constexpr engine::NameTable kRecomputeMethodNames{
    std::array<std::pair<RecomputeMethod, std::string_view>, 2>{{
        {RecomputeMethod::uniform, "uniform"},
        {RecomputeMethod::block, "block"},
    }}};
inline constexpr engine::NameTable kOptimizerImplNames{
    std::array<std::pair<OptimizerImpl, std::string_view>, 3>{{
        {OptimizerImpl::fused, "fused"},
        {OptimizerImpl::foreach, "foreach"},
        {OptimizerImpl::for_loop, "for_loop"},
    }}};
inline constexpr engine::NameTable kOptimizerNames{
    std::array<std::pair<Optimizer, std::string_view>, 3>{{
        {Optimizer::adam, "adam"},
        {Optimizer::adamw, "adamw"},
        {Optimizer::sgd, "sgd"},
    }}};
inline constexpr engine::NameTable kPipelineScheduleNames{
    std::array<std::pair<PipelineSchedule, std::string_view>, 6>{{
        {PipelineSchedule::gpipe, "gpipe"},
        {PipelineSchedule::one_f_one_b, "1f1b"},
        {PipelineSchedule::interleaved, "interleaved"},
        {PipelineSchedule::zb_h1, "zb-h1"},
        {PipelineSchedule::zb_h2, "zb-h2"},
        {PipelineSchedule::dualpipe, "dualpipe"},
    }}};
inline constexpr engine::NameTable kPipelineEngineNames{
    std::array<std::pair<PipelineEngine, std::string_view>, 2>{{
        {PipelineEngine::megatron, "megatron"},
        {PipelineEngine::deepspeed, "deepspeed"},
    }}};
inline constexpr engine::NameTable kSendCommunicatorNames{
    std::array<std::pair<SendCommunicator, std::string_view>, 3>{{
        {SendCommunicator::automatic, "auto"},
        {SendCommunicator::pair, "pair"},
        {SendCommunicator::group, "group"},
    }}};
inline constexpr engine::NameTable kP2POverlapNames{
    std::array<std::pair<P2POverlap, std::string_view>, 4>{{
        {P2POverlap::automatic, "auto"},
        {P2POverlap::none, "none"},
        {P2POverlap::one_pass, "one_pass"},
        {P2POverlap::full, "full"},
    }}};
inline constexpr engine::NameTable kAttentionNames{
    std::array<std::pair<Attention, std::string_view>, 3>{{
        {Attention::standard, "standard"},
        {Attention::flash, "flash"},
        {Attention::flash1, "flash1"},
    }}};
// training.fused_kernels as a map: one key per kernel family.
inline constexpr engine::NameTable kKernelFamilyNames{
    std::array<std::pair<kernels::KernelFamily, std::string_view>, kernels::kNumKernelFamilies>{{
        {kernels::KernelFamily::norm, "norm"},
        {kernels::KernelFamily::activation, "activation"},
        {kernels::KernelFamily::rope, "rope"},
        {kernels::KernelFamily::softmax, "softmax"},
        {kernels::KernelFamily::bias_dropout_add, "bias_dropout_add"},
        {kernels::KernelFamily::cross_entropy, "cross_entropy"},
    }}};
inline constexpr engine::NameTable kDataParallelNames{
    std::array<std::pair<DataParallel, std::string_view>, 6>{{
        {DataParallel::ddp, "ddp"},
        {DataParallel::zero1, "zero1"},
        {DataParallel::zero2, "zero2"},
        {DataParallel::zero3, "zero3"},
        {DataParallel::fsdp, "fsdp"},
        {DataParallel::hsdp, "hsdp"},
    }}};

// simulation.fold (docs/performance.md "Folding"): simulate one data-parallel replica and let
// the others mirror it. `automatic` folds where that is exact (the analytical network model);
// `dp` always folds; `none` never does.
enum class Fold : std::uint8_t { automatic, dp, none };
inline constexpr engine::NameTable kFoldNames{std::array<std::pair<Fold, std::string_view>, 3>{{
    {Fold::automatic, "auto"},
    {Fold::dp, "dp"},
    {Fold::none, "none"},
}}};
inline constexpr engine::NameTable kContextParallelCommNames{
    std::array<std::pair<ContextParallelComm, std::string_view>, 3>{{
        {ContextParallelComm::p2p, "p2p"},
        {ContextParallelComm::all_gather, "all_gather"},
        {ContextParallelComm::a2a, "a2a"},
    }}};

struct ClusterConfig {
  int nodes = 1;
  std::string node_preset;  // empty when described explicitly
  GpuSpec gpu;
  engine::ClusterTopologySpec topology;  // node + fabric, bandwidths in SI
  HostSpec host;                         // cluster.host: the node's host memory
};

struct TrainingConfig {
  long global_batch = 0;
  int micro_batch = 1;
  int seq_len = 0;
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::none;
  // training.recompute_method / recompute_num_layers (both or neither, recompute: full only;
  // docs/memory.md "Recompute"). The defaults are what `full` alone means: every block
  // checkpointed on its own.
  RecomputeMethod recompute_method = RecomputeMethod::uniform;
  int recompute_num_layers = 1;
  bool recompute_method_given = false;
  bool recompute_num_layers_given = false;
  Optimizer optimizer = Optimizer::adam;
  // training.momentum: SGD's momentum. torch.optim.SGD's default, 0, keeps no state; any other
  // value keeps a momentum buffer per parameter. Only with `optimizer: sgd`.
  double momentum = 0;
  // training.weight_decay: sgd's and adam's L2 term, added to the gradients out of place by
  // torch's foreach step (one more parameter-sized temporary); adamw's decoupled decay, a
  // multiply of the parameters in place. 0 (torch's default but for adamw's 0.01): no term.
  double weight_decay = 0;
  // training.attention; when the file does not say, default_attention(gpu, precision).
  Attention attention = Attention::flash;
  bool attention_given = false;
  bool fused_kernels = true;  // Megatron's fused softmax, bias-GeLU, bias-dropout-add, RoPE, CE
  // training.fused_kernels as a map: the families stated false (kernels::family_bit) run eager
  // inside Megatron-style model code; fused_kernels stays true. 0 with the boolean form.
  std::uint8_t eager_families = 0;
  // training.gradient_accumulation_fusion: the weight-gradient GEMM accumulates into the fp32
  // main_grad (Megatron's fused wgrad, the default); false: it writes a fresh gradient and a
  // separate add accumulates it (--no-gradient-accumulation-fusion).
  bool gradient_accumulation_fusion = true;
  // training.master_weights: with a 16-bit precision, whether the optimizer keeps an fp32 master
  // copy of the weights and fp32 states (mixed precision, Megatron / DeepSpeed / AMP: 16 bytes per
  // parameter with Adam) or steps the 16-bit weights with 16-bit states ("pure" bf16, torchtune
  // `dtype: bf16`, LitGPT `bf16-true`: 8 bytes per parameter). Ignored for fp32 and tf32.
  bool master_weights = true;
  // training.amp: PyTorch autocast (torch.cuda.amp, HF Trainer `fp16=True`) instead of Megatron's
  // 16-bit model: parameters and gradients stay fp32 (the parameters are the optimizer's master),
  // autocast caches a 16-bit copy of each weight that the matmuls save for the backward, and
  // softmax and layer norm run in fp32. Needs a 16-bit precision.
  bool amp = false;
  // training.grad_reduce_dtype: the dtype gradients are accumulated in and reduced over data
  // parallelism; unset: the stored parameters' dtype (parameter_bytes). Megatron-LM forces fp32
  // for bf16 runs (arguments.py: "bfloat16 requires gradient accumulation and all-reduce to be
  // done in fp32"), PyTorch FSDP's MixedPrecision.reduce_dtype chooses it.
  std::optional<Precision> grad_reduce_dtype;
  // training.set_to_none: zero_grad(set_to_none=True) frees the gradients after the step
  // (PyTorch >= 2.0's default); false keeps them allocated and zeroed (PyTorch < 2.0's
  // Module/Optimizer.zero_grad() default), so they exist through the next forward.
  bool set_to_none = true;
  // training.loss_chunks: the output projection and the cross-entropy run over this many chunks
  // of the micro-batch's tokens, each chunk's loss compiled (torchtune's CEWithChunkedOutputLoss
  // with `compile: true`): the 16-bit logits are kept, no fp32 copy or softmax of them is. 1: the
  // whole micro-batch's logits through one cross-entropy.
  int loss_chunks = 1;
  // training.optimizer_impl; when the file does not say: fused with fused_kernels, else foreach.
  OptimizerImpl optimizer_impl = OptimizerImpl::fused;
  bool optimizer_impl_given = false;
};

// training.attention's default: flash for 16-bit and fp8 training on a GPU with bf16 tensor cores
// (Ampere and later: A100, H100, H200, B200, L40S), where FlashAttention-2 runs; standard on
// V100 (no FlashAttention-2 kernel) and for fp32/tf32 training (FlashAttention has no fp32 path).
Attention default_attention(const GpuSpec& gpu, Precision precision);

// parallel.fsdp.init: how the model reaches the GPUs before training (docs/memory.md "Start-up").
enum class FsdpInit {
  sharded,  // built on the meta device (or the CPU) and materialized shard by shard
  device,   // built whole on every GPU, then wrapped by FSDP, which flattens and shards each unit
};
inline constexpr engine::NameTable kFsdpInitNames{
    std::array<std::pair<FsdpInit, std::string_view>, 2>{{
        {FsdpInit::sharded, "sharded"},
        {FsdpInit::device, "device"},
    }}};

// PyTorch FSDP's knobs (parallel.fsdp); they apply to zero3, fsdp and hsdp.
struct FsdpConfig {
  int unit_blocks = 1;  // transformer blocks per FSDP unit (fsdp.unit)
  bool reshard_after_forward =
      true;  // false: SHARD_GRAD_OP, parameters stay gathered until backward
  // false: parameters stay gathered from one micro-batch's backward to the next micro-batch
  // (FSDP2's set_reshard_after_backward(False), which torch.distributed.pipelining sets for all
  // but the last micro-batch): one all-gather per unit and step instead of one per micro-batch.
  bool reshard_after_backward = true;
  int prefetch = 1;               // backward prefetch depth: units all-gathered ahead
  bool forward_prefetch = false;  // also prefetch the next unit in forward
  // true: FSDP's no_sync() over gradient accumulation (FSDP1, Accelerate, Lightning's
  // no_backward_sync): every unit keeps its unsharded gradients until the last micro-batch,
  // which alone reduce-scatters. false (FSDP2's default, torchtitan, torchtune, DeepSpeed ZeRO-3,
  // Megatron FSDP): each micro-batch reduce-scatters and accumulates into the shard.
  bool no_sync = false;
  // true: the embedding, the final norm and the head are one root unit, gathered from the
  // embedding's forward to its backward and reduce-scattered after it (FSDP1 and FSDP2 wrapping
  // each block and then the model: the root's parameters are not resharded after forward).
  // false: each is a unit of its own, like a block (torchtitan).
  bool root_unit = false;
  int shard_group = 0;  // hsdp: ranks per sharding group; 0 = one node
  FsdpInit init = FsdpInit::sharded;
};

// parallel.offload (docs/offload.md): what lives in host memory instead of HBM.
struct OffloadConfig {
  // ZeRO-Offload (DeepSpeed offload_optimizer: cpu) / FSDP CPUOffload: the fp32 master weights and
  // optimizer states live on the host; each step the rank's gradient shard goes down over PCIe,
  // the CPU steps it, and the updated 16-bit parameter shard comes back up.
  bool optimizer = false;
  // Activation offload (Megatron-Core / Transformer Engine cpu_offloading, torch's
  // save_on_cpu): each layer's saved activations go to the host after its forward and come back
  // before its backward, on copy streams beside the compute.
  bool activations = false;
  bool any() const { return optimizer || activations; }
};

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  int dp = 1;  // derived: world / (tp·pp·cp)
  int cp = 1;  // context parallelism: each sequence split over cp ranks (docs/parallelism.md)
  ContextParallelComm cp_comm = ContextParallelComm::p2p;
  bool sequence_parallel = false;
  // parallel.fp8_comm (needs training.precision fp8): more exchanges travel in fp8: the MoE
  // dispatch (forward) and its gradient's return (backward), ZeRO/FSDP parameter all-gathers, the
  // forward sequence-parallel reduce-scatters. Gradient reductions, the MoE combine and pipeline
  // sends stay bf16 (DeepSeek-V3 §3.3.2, Megatron's --fp8-param-gather, torchao's float8
  // all-gather, Transformer Engine userbuffers' fp8_buf).
  bool fp8_comm = false;
  // parallel.tp_comm_overlap (needs sequence_parallel and each TP group inside one node):
  // Transformer Engine's userbuffers split the sequence-parallel all-gathers and reduce-scatters
  // into chunks that run beside the layer's GEMMs (Megatron-Core's --tp-comm-overlap).
  bool tp_comm_overlap = false;
  // parallel.tp_async_grad_reduce: Megatron's LinearWithGradAccumulationAndAsyncCommunication
  // reduces a column-parallel linear's input gradient over TP (all-reduce, or reduce-scatter
  // under sequence parallelism) asynchronously beside the layer's weight-gradient GEMM
  // (Megatron-LM since September 2021, 3f652469's --no-async-tensor-model-parallel-allreduce;
  // Megatron-Core). Unset (`auto`): on with Megatron's engine, off with DeepSpeed's
  // (Megatron-DeepSpeed forked Megatron-LM before it).
  std::optional<bool> tp_async_grad_reduce;
  bool tp_async_grad_reduce_on() const {
    return tp_async_grad_reduce.value_or(pipeline_engine == PipelineEngine::megatron);
  }
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  PipelineEngine pipeline_engine = PipelineEngine::megatron;
  SendCommunicator pp_send_communicator = SendCommunicator::automatic;
  // Whether the pipeline's sends run on the pipeline group's communicator (docs/parallelism.md
  // "Which communicator a send runs on"): as stated, else as the framework posts them. Megatron
  // batches them with batch_isend_irecv (batch_p2p_comm) unless the interleaved schedule
  // overlaps them (overlap_p2p_comm: lone isend / irecv); DualPipe batches them; DeepSpeed's
  // engine sends on a group of the two ranks.
  bool pp_sends_on_group() const {
    if (pp_send_communicator != SendCommunicator::automatic)
      return pp_send_communicator == SendCommunicator::group;
    if (pipeline_engine == PipelineEngine::deepspeed) return false;
    // Megatron's interleaved schedule sends with lone isends under overlap_p2p_comm, with
    // batch_isend_irecv without it.
    return schedule != PipelineSchedule::interleaved || pp_p2p_overlap_mode() == P2POverlap::none;
  }
  P2POverlap pp_p2p_overlap = P2POverlap::automatic;
  // parallel.pp_scatter_gather: Megatron-LM's scatter_gather_tensors_in_pipeline (on by default
  // until Megatron-Core dropped it): without sequence parallelism each TP rank sends 1/tp of the
  // boundary tensor and the receiving stage all-gathers it over TP (Narayanan et al. SC'21 §4.1).
  bool pp_scatter_gather = false;
  // How far the compute runs beside the pipeline's transfers: as stated, else as the framework
  // does. Megatron's interleaved schedule posts its receives a pass ahead and waits for each send
  // before the next compute (overlap_p2p_comm, deallocate_pipeline_outputs); gpipe and 1F1B
  // block on every call (batch_isend_irecv, then wait). The zero-bubble runtime waits for a
  // receive only in the pass that consumes it and for sends at the end: `full`. DualPipe defers
  // each send to a later call of its own step order, which the passes do not reproduce: `full`
  // (scenario_validate.cpp refuses the others). DeepSpeed's engine blocks its compute stream on
  // each transfer (deepspeed_pipeline.hpp), whatever this says.
  P2POverlap pp_p2p_overlap_mode() const {
    if (pp_p2p_overlap != P2POverlap::automatic) return pp_p2p_overlap;
    switch (schedule) {
      case PipelineSchedule::interleaved:
        return P2POverlap::one_pass;
      case PipelineSchedule::gpipe:
      case PipelineSchedule::one_f_one_b:
      case PipelineSchedule::dualpipe:
        return P2POverlap::none;
      default:
        return P2POverlap::full;
    }
  }
  int virtual_stages = 1;
  // parallel.microbatch_group_size (interleaved only): Megatron-Core's
  // --microbatch-group-size-per-virtual-pipeline-stage, the micro-batches each virtual stage runs
  // in a row before the next chunk's; 0 = pp, Megatron's depth-first default.
  int microbatch_group = 0;
  int microbatch_group_size() const { return microbatch_group > 0 ? microbatch_group : pp; }
  // Model chunks each pipeline rank holds: virtual_stages, or 2 under dualpipe (stage s of the
  // forward direction and stage pp − 1 − s of the reverse one; docs/dualpipe.md).
  int chunks_per_rank() const {
    return schedule == PipelineSchedule::dualpipe ? 2 : virtual_stages;
  }
  // Transformer blocks (or list layers) per pipeline chunk, pp × virtual_stages entries; empty:
  // split evenly (transformers) or balanced by time (layer lists).
  std::vector<int> stage_layers;
  DataParallel data_parallel = DataParallel::ddp;
  double bucket_bytes = 25.0 * 1024 * 1024;  // bucket_mb in MiB, as PyTorch's bucket_cap_mb
  bool overlap = true;
  // PyTorch DDP's gradient_as_bucket_view: gradients are views into the all-reduce buckets (one
  // persistent buffer, as Megatron's DDP) instead of tensors of their own next to a bucket copy.
  bool gradient_as_bucket_view = false;
  // DDP's find_unused_parameters: each iteration the reducer all-reduces its map of used
  // parameters (an int32 per parameter tensor) once the last bucket is ready, and the step waits
  // for it; static_graph learns the map in the first iteration and drops that all-reduce.
  bool find_unused_parameters = false;
  bool static_graph = false;
  // DDP under the Join context manager (uneven inputs): each iteration's synchronizing forward
  // all-reduces a one-element tensor to count the ranks that have not joined.
  bool join = false;
  FsdpConfig fsdp;
  OffloadConfig offload;
  std::vector<std::string> order = {"tp", "ep", "dp", "pp"};  // fastest-varying first; cp
                                                              // goes after tp unless listed
  // Ranks holding the same (dense) parameters, over which gradients are reduced: dp × cp.
  int replicas() const { return dp * cp; }
};

// simulation.memory (docs/memory.md): what the memory model cannot derive from the plan.
struct MemoryOptions {
  // Share of the caching allocator's memory that is reserved but not allocated (fragmentation and
  // cached free blocks): the "tight" band above the peak.
  double fragmentation = 0.05;
  // Bytes of the CUDA context (driver, loaded kernels) per GPU; < 0: the GPU family's default.
  double cuda_context = -1;
};

struct SimulationConfig {
  std::string network_model{engine::kDefaultNetworkModel};  // a name of engine::network_models()
  int iterations = 1;
  std::string calibration;  // path of a calibration profile, empty for none
  engine::AlgorithmOverrides algorithms = engine::no_overrides();
  // Share of each link kind's nominal bandwidth that collectives achieve, indexed by
  // engine::LinkKind (nvlink, pcie, ib, ethernet, cpu_interconnect). NCCL reaches about 80 % of
  // NVLink's figure in bus bandwidth (≈ 235 of 300 GB/s on A100, ≈ 370 of 450 on H100) and about
  // 95 % of an InfiniBand NIC's; the PCIe and CPU-link figures of the presets are effective
  // already. A calibration profile, where it covers a collective, overrides all of this.
  std::array<double, engine::kNumLinkKinds> link_efficiency = {0.8, 1.0, 0.95, 0.9, 1.0};
  // simulation.nccl.channels: collective channels for every group; 0 = NCCL's rule
  // (engine::collective_channels). build_topology passes it as ClusterTopologySpec::channels.
  int nccl_channels = 0;
  // simulation.nccl.min_ctas (NCCL_MIN_CTAS): every collective's channels, NVLS's included, at
  // least this many; 0 = no floor. ClusterTopologySpec::min_ctas.
  int nccl_min_ctas = 0;
  // simulation.nccl.version: the NCCL the cluster runs ("2.21.5"); empty = not stated. Compared
  // with a calibration profile's (a note, or with --strict an error, when MAJOR.MINOR differ).
  std::string nccl_version;
  Fold fold = Fold::automatic;
  // simulation.sm_sharing: overlapped compute runs on the SMs communication leaves
  // (docs/fidelity.md "Compute and communication share the SMs"); false: overlap is free.
  bool sm_sharing = true;
  MemoryOptions memory;
  // simulation.simgrid: SimGrid's network model and factors for network_model: simgrid.
  engine::SimgridSettings simgrid;
};

// workload (DESIGN.md "Scenario file", docs/interop.md "Import"): Chakra execution traces as the
// workload instead of a model and a plan; the cluster, network and simulation sections still apply.
struct WorkloadConfig {
  std::string chakra;       // PREFIX: PREFIX.0.et ... PREFIX.<world-1>.et; empty for none
  std::string comm_groups;  // ASTRA-sim's comm-group JSON ({"1": [0, 1], ...}); empty for none
  bool from_chakra() const { return !chakra.empty(); }
};

struct Scenario {
  std::string name;
  std::string file;  // the path it was loaded from
  ClusterConfig cluster;
  ModelSpec model;
  TrainingConfig training;
  ParallelConfig parallel;
  SimulationConfig simulation;
  WorkloadConfig workload;
  // Where each key was written ("parallel.tp" -> file:line:col), for errors raised after loading.
  std::map<std::string, SourceLocation> locations;
  // Every file the scenario was made from (itself, a calibration profile, a config.json):
  // outputs must never replace one.
  std::vector<std::string> inputs;
  // A validation case's published figures (top-level `published:`); empty for other scenarios.
  std::vector<PublishedFigure> published;

  // In 64 bits: validation bounds it (limits::kWorld) before anything else uses it.
  std::int64_t world_size() const {
    return static_cast<std::int64_t>(cluster.nodes) * cluster.topology.node.gpus;
  }
  // Micro-batches per iteration on each pipeline: global_batch / (micro_batch · dp).
  long num_microbatches() const {
    return training.global_batch / (static_cast<long>(training.micro_batch) * parallel.dp);
  }
  // "FILE:LINE:COL: KEY: message" for a key of this scenario.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
};

// Checks a scenario changed in code (the plan's arithmetic, as loading does) and derives dp
// again when parallel.dp is 0. Throws ScenarioError. The memory model's suggestions use it.
void validate_scenario(Scenario& scenario);

// Loads `path`, applies `overrides` ("parallel.tp=4", YAML values) and validates. Throws
// ScenarioError for every kind of bad input.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// Same, from text already in memory (`origin` names it in messages).
Scenario parse_scenario(const std::string& text, const std::string& origin,
                        const std::vector<std::string>& overrides = {});

}  // namespace clustersim::models
