#include "models/published.hpp"

namespace clustersim::models {

namespace {

constexpr PublishedMetric kMetrics[] = {
    {"iteration_time_s", "s", "time", "seconds per training iteration"},
    {"tflops_per_gpu", "TFLOP/s", "time",
     "executed FLOPs (recompute included) per GPU per second, as Megatron-LM reports"},
    {"mfu", "fraction", "time", "model FLOPs (no recompute) over the dense peak"},
    {"model_tflops_per_gpu_causal", "TFLOP/s", "time",
     "model FLOPs per GPU per second by Megatron-Bridge's count (NeMo 25.x 'Model "
     "TFLOP/sec/GPU'): the causal attention core counted half, no recompute"},
    {"tokens_per_s", "tokens/s", "time", "tokens per second, whole job"},
    {"tokens_per_s_per_gpu", "tokens/s", "time", "tokens per second per GPU"},
    {"samples_per_s", "samples/s", "time", "samples (sequences, images) per second, whole job"},
    {"samples_per_s_per_gpu", "samples/s", "time", "samples per second per GPU"},
    {"model_state_gb", "GB", "memory",
     "weights + gradients + optimizer states per GPU, 1e9 bytes (ZeRO's accounting)"},
    {"max_memory_allocated_gb", "GB", "memory",
     "torch.cuda.max_memory_allocated(): tensors only, 1e9 bytes"},
    {"peak_memory_active_gib", "GiB", "memory", "the caching allocator's peak active bytes, 2^30"},
    {"peak_memory_gb", "GB", "memory", "peak tensor memory, 1e9 bytes (allocated or reserved)"},
    {"peak_memory_reserved_gb", "GB", "memory",
     "torch.cuda.max_memory_reserved(): tensors plus allocator slack, 1e9 bytes"},
    {"nvidia_smi_used_mib", "MiB", "memory",
     "nvidia-smi's used memory: reserved plus the CUDA context, 2^20 bytes"},
};

}  // namespace

std::span<const PublishedMetric> published_metrics() {
  return kMetrics;
}

const PublishedMetric* find_published_metric(std::string_view name) {
  for (const auto& m : kMetrics)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace clustersim::models
