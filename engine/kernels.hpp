// Kernel descriptors of the schedule IR (DESIGN.md "The schedule IR"): a compute op names, by index
// into a shared KernelTable, the list of kernels it launches. The engine does not interpret them;
// the compute model costs them, the executor launches them and the trace can expand them.
//
// Identical lists share one index (identical layers launch identical kernels), so kernels add no
// per-op memory: a million ops of a 96-layer model reference a handful of lists.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace clustersim::engine {

enum class KernelKind : std::uint8_t {
  gemm,           // C[m×n] = op(A)[m×k] · op(B)[k×n], `batch` independent products
  attention_fwd,  // fused (flash) attention forward
  attention_bwd,  // fused (flash) attention backward
  memory,         // memory-bound: elementwise, norm, softmax, optimizer, cast, copy, reduction
  launch_only,    // does (almost) no work; costs a launch (e.g. a tiny bookkeeping kernel)
  host_memory,    // memory-bound work on the host CPU (an offloaded optimizer step): bytes moved
                  // in host memory, at the host's bandwidth
};
inline constexpr int kNumKernelKinds = 6;
std::string_view to_string(KernelKind);

// One kernel launch. Shapes by kind:
//   gemm:            m, n, k, batch as in BLAS (column-major or not does not matter for the cost);
//                    flops = 2·m·n·k·batch, bytes = what it reads and writes.
//   attention_*:     m = query length, n = key length, k = head dimension, batch = sequences ×
//                    heads; `causal` says the kernel skips the masked half; flops are the kernel's
//                    (FlashAttention's convention: 4·batch·m·n·k forward, halved when causal).
//   memory:          bytes moved (read + written); flops only informative.
//   host_memory:     as memory, in host memory on the CPU.
// `dtype` is an opaque precision index, interpreted by the compute model (like Op::precision).
struct Kernel {
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t k = 0;
  std::uint64_t batch = 1;
  double flops = 0.0;
  double bytes = 0.0;
  std::uint32_t name = 0;  // index into KernelTable::names()
  KernelKind kind = KernelKind::memory;
  std::uint8_t dtype = 0;
  bool trans_a = false;
  bool trans_b = false;
  bool causal = false;
  // Which implementation of its kind, opaque to the engine as dtype is (attention: 1 is
  // FlashAttention 1.x, models/kernels/kernel_cost.hpp); 0 the default one.
  std::uint8_t variant = 0;

  friend bool operator==(const Kernel&, const Kernel&) = default;
};

// Interned kernel lists, flat: every list's kernels lie back to back in one array. `intern`
// returns the index of an identical list if there is one (found by hashing), else appends.
class KernelTable {
 public:
  // Index of the list equal to `kernels` (same kernels in the same order), added if new.
  std::uint32_t intern(std::span<const Kernel> kernels);
  std::span<const Kernel> list(std::uint32_t index) const;
  std::size_t size() const { return begin_.size() - 1; }  // number of distinct lists
  std::size_t kernel_count() const { return kernels_.size(); }

  // Kernel names ("L.qkv fprop") are interned too; a Kernel stores the index.
  std::uint32_t name(std::string_view text);
  const std::string& name_of(std::uint32_t index) const { return names_[index]; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<Kernel> kernels_;
  std::vector<std::uint32_t> begin_{0};  // list i is kernels_[begin_[i], begin_[i + 1])
  std::unordered_multimap<std::uint64_t, std::uint32_t> by_hash_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index_;
};

// Hash of a kernel list (all fields, in order); equal lists hash equal.
std::uint64_t hash_kernels(std::span<const Kernel> kernels);

}  // namespace clustersim::engine
