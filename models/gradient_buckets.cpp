#include "models/gradient_buckets.hpp"

#include <stdexcept>

namespace clustersim::models {

std::vector<GradientBucket> assign_buckets(const std::vector<LayerCost>& layers,
                                           int bytes_per_gradient, double bucket_bytes,
                                           double first_bucket_bytes) {
  if (!(bucket_bytes > 0.0) || !(first_bucket_bytes > 0.0) || bytes_per_gradient <= 0)
    throw std::invalid_argument("gradient buckets: sizes must be positive");
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  bool empty = true;
  auto close = [&] {
    open.bytes =
        static_cast<std::uint64_t>(open.params) * static_cast<std::uint64_t>(bytes_per_gradient);
    buckets.push_back(open);
    open = GradientBucket{};
    empty = true;
  };
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const auto& tensors = layers[static_cast<std::size_t>(l)].tensors;
    for (auto t = tensors.rbegin(); t != tensors.rend(); ++t) {
      if (t->count <= 0) continue;
      if (empty) {
        open.last_layer = l;
        empty = false;
      }
      open.first_layer = l;
      open.params += t->count;
      ++open.tensors;
      const double limit = buckets.empty() ? first_bucket_bytes : bucket_bytes;
      if (open.params * bytes_per_gradient >= limit) close();
    }
  }
  if (!empty) close();
  return buckets;
}

}  // namespace clustersim::models
