// Upper bounds of every count a scenario gives (docs/scenario.md "Limits"). They are far above any
// real training run yet low enough that every product of counts the simulator forms (world size,
// ranks × micro-batches × layers, tokens per micro-batch, experts × layers) fits in 64 bits, and
// most fit in 32, so no arithmetic on scenario counts can wrap around. A value past its bound is
// a ScenarioError naming the key, never a crash or a runaway allocation.
#pragma once

#include <cstdint>

namespace clustersim::models::limits {

// cluster
inline constexpr long kNodes = 65'536;
inline constexpr long kGpusPerNode = 1'024;
inline constexpr long kWorld = 262'144;       // nodes × gpus_per_node
inline constexpr long kCpus = 64;             // intra_node.cpus
inline constexpr long kFabricPorts = 65'536;  // nics_per_leaf, spines, leaves_per_pod, cores
// Leaf-to-spine links of a fat tree or rail fabric (leaves × spines): bounds the topology graph.
inline constexpr long kFabricLinks = 4'194'304;

// model
inline constexpr long kLayers = 10'000;                 // num_layers; list layers with repeats
inline constexpr long kHidden = 1'048'576;              // hidden_size, ffn sizes, heads
inline constexpr long kVocab = 16'777'216;              // vocab_size
inline constexpr long kPositions = 16'777'216;          // max_positions
inline constexpr long kExperts = 65'536;                // moe.num_experts, shared_experts
inline constexpr long kExpertsTimesLayers = 4'194'304;  // routed experts over all MoE layers

// training
inline constexpr long kGlobalBatch = 1'099'511'627'776;  // 2^40 samples
inline constexpr long kMicroBatch = 65'536;
inline constexpr long kSeqLen = 16'777'216;
inline constexpr long kLossChunks =
    4'096;  // training.loss_chunks (torchtune uses 8)                // 2^24 tokens
inline constexpr long kTokensPerMicroBatch = 134'217'728;  // micro_batch × seq_len, 2^27
inline constexpr long kMicroBatches = 65'536;              // per pipeline and iteration

// parallel: tp, pp, ep, dp, cp and the fsdp sizes divide the world or the layers anyway; the bound
// keeps their products in range before those checks run.
inline constexpr long kParallel = kWorld;
inline constexpr long kVirtualStages = kLayers;

// simulation
inline constexpr long kIterations = 1'000;
// Ops of the whole schedule (about 150 bytes each while simulating, docs/performance.md): a
// schedule past this would need more than ~7.5 GB; the estimate is a lower bound, so a scenario
// that fails it certainly would.
inline constexpr std::int64_t kOps = 50'000'000;

}  // namespace clustersim::models::limits
