// DDP gradient buckets as PyTorch builds them: parameters in reverse registration order, packed
// into buckets that close once they reach their limit (the first bucket 1 MiB, then bucket_mb);
// a tensor is never split. A bucket's all-reduce can start when its last gradient is produced,
// i.e. when the backward of the earliest layer it holds finishes.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model_costs.hpp"

namespace clustersim::models {

inline constexpr double kFirstBucketBytes = 1024.0 * 1024.0;  // torch.distributed default

struct GradientBucket {
  double params = 0;        // gradient elements
  std::uint64_t bytes = 0;  // params × bytes per gradient element
  int first_layer = 0;      // lowest layer index holding a tensor of this bucket
  int last_layer = 0;       // highest
  int tensors = 0;
};

// `layers` in forward order; buckets come out in the order they fill (last layer first).
std::vector<GradientBucket> assign_buckets(const std::vector<LayerCost>& layers,
                                           int bytes_per_gradient, double bucket_bytes,
                                           double first_bucket_bytes = kFirstBucketBytes);

}  // namespace clustersim::models
