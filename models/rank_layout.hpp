// Where each rank sits in the parallel plan (DESIGN.md "Rank order"): by default tp varies
// fastest, then cp, then ep, then the rest of dp, then pp (Megatron-Core's "tp-cp-ep-dp-pp");
// `parallel.order` changes it. Expert parallelism is carved out of data parallelism:
// dp = ep × (dp / ep). Context-parallel ranks hold the same parameters as data-parallel ones, so
// gradients are reduced over cp × dp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::models {

enum class Axis { tp = 0, ep = 1, dp = 2, pp = 3, cp = 4 };  // dp here: the dp / ep replicas
inline constexpr int kNumAxes = 5;

struct RankCoords {
  int tp = 0;
  int ep = 0;
  int dp = 0;  // index among the dp / ep replicas
  int pp = 0;
  int cp = 0;
  int data_parallel_index(int ep_size) const { return dp * ep_size + ep; }  // 0 .. dp-1
};

class RankLayout {
 public:
  // `order` lists "tp", "ep", "dp", "pp" and optionally "cp", fastest-varying first; without
  // "cp" it goes right after "tp" (Megatron-Core's order).
  RankLayout(int tp, int ep, int dp, int pp, const std::vector<std::string>& order, int cp = 1);

  int world_size() const { return size_[0] * size_[1] * size_[2] * size_[3] * size_[4]; }
  RankCoords coords(engine::Rank rank) const;
  engine::Rank rank(const RankCoords& c) const;

  // Ranks that differ from `rank` only along the given axes, in rank order.
  std::vector<engine::Rank> group(engine::Rank rank, std::initializer_list<Axis> axes) const;

  std::vector<engine::Rank> tp_group(engine::Rank r) const { return group(r, {Axis::tp}); }
  std::vector<engine::Rank> cp_group(engine::Rank r) const { return group(r, {Axis::cp}); }
  std::vector<engine::Rank> pp_group(engine::Rank r) const { return group(r, {Axis::pp}); }
  std::vector<engine::Rank> ep_group(engine::Rank r) const { return group(r, {Axis::ep}); }
  // Replicas of the same dense parameters: all of dp (ep × dp/ep) and cp.
  std::vector<engine::Rank> dp_group(engine::Rank r) const {
    return group(r, {Axis::cp, Axis::ep, Axis::dp});
  }
  // Replicas of the same experts.
  std::vector<engine::Rank> expert_dp_group(engine::Rank r) const {
    return group(r, {Axis::cp, Axis::dp});
  }

 private:
  std::array<int, kNumAxes> size_{};    // by Axis
  std::array<int, kNumAxes> stride_{};  // by Axis
};

}  // namespace clustersim::models
