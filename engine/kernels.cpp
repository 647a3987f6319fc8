#include "engine/kernels.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>

namespace clustersim::engine {
namespace {

static_assert(sizeof(Kernel) == 64, "Kernel stays one cache line");

constexpr std::array<std::string_view, kNumKernelKinds> kKindNames = {
    "gemm", "attention_fwd", "attention_bwd", "memory", "launch_only", "host_memory"};

// 64-bit mix (splitmix64's finalizer) folded over the fields.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

std::string_view to_string(KernelKind kind) {
  return kKindNames.at(static_cast<std::size_t>(kind));
}

std::uint64_t hash_kernels(std::span<const Kernel> kernels) {
  std::uint64_t h = kernels.size();
  for (const Kernel& k : kernels) {
    h = mix(h, k.m);
    h = mix(h, k.n);
    h = mix(h, k.k);
    h = mix(h, k.batch);
    h = mix(h, std::bit_cast<std::uint64_t>(k.flops));
    h = mix(h, std::bit_cast<std::uint64_t>(k.bytes));
    h = mix(h, (std::uint64_t{k.name} << 32) |
                   (std::uint64_t{static_cast<std::uint8_t>(k.kind)} << 24) |
                   (std::uint64_t{k.dtype} << 16) | (std::uint64_t{k.variant} << 8) |
                   (std::uint64_t{k.trans_a} << 2) | (std::uint64_t{k.trans_b} << 1) |
                   std::uint64_t{k.causal});
  }
  return h;
}

std::uint32_t KernelTable::intern(std::span<const Kernel> kernels) {
  const std::uint64_t h = hash_kernels(kernels);
  const auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const auto existing = list(it->second);
    if (std::equal(existing.begin(), existing.end(), kernels.begin(), kernels.end()))
      return it->second;
  }
  const auto index = static_cast<std::uint32_t>(size());
  kernels_.insert(kernels_.end(), kernels.begin(), kernels.end());
  begin_.push_back(static_cast<std::uint32_t>(kernels_.size()));
  by_hash_.emplace(h, index);
  return index;
}

std::span<const Kernel> KernelTable::list(std::uint32_t index) const {
  if (index >= size())
    throw std::out_of_range("KernelTable: no kernel list " + std::to_string(index));
  return {kernels_.data() + begin_[index], begin_[index + 1] - begin_[index]};
}

std::uint32_t KernelTable::name(std::string_view text) {
  if (auto it = name_index_.find(text); it != name_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(text);
  name_index_.emplace(names_.back(), index);
  return index;
}

}  // namespace clustersim::engine
