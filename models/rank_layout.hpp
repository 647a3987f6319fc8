// Where each rank sits in the parallel plan (DESIGN.md "Rank order"): by default tp varies
// fastest, then ep, then the rest of dp, then pp (Megatron's order); `parallel.order` changes it.
// Expert parallelism is carved out of data parallelism: dp = ep × (dp / ep).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::models {

enum class Axis { tp = 0, ep = 1, dp = 2, pp = 3 };  // dp here: the dp / ep replicas

struct RankCoords {
  int tp = 0;
  int ep = 0;
  int dp = 0;  // index among the dp / ep replicas
  int pp = 0;
  int data_parallel_index(int ep_size) const { return dp * ep_size + ep; }  // 0 .. dp-1
};

class RankLayout {
 public:
  // `order` lists "tp", "ep", "dp", "pp", fastest-varying first.
  RankLayout(int tp, int ep, int dp, int pp, const std::vector<std::string>& order);

  int world_size() const { return size_[0] * size_[1] * size_[2] * size_[3]; }
  RankCoords coords(engine::Rank rank) const;
  engine::Rank rank(const RankCoords& c) const;

  // Ranks that differ from `rank` only along the given axes, in rank order.
  std::vector<engine::Rank> group(engine::Rank rank, std::initializer_list<Axis> axes) const;

  std::vector<engine::Rank> tp_group(engine::Rank r) const { return group(r, {Axis::tp}); }
  std::vector<engine::Rank> pp_group(engine::Rank r) const { return group(r, {Axis::pp}); }
  std::vector<engine::Rank> ep_group(engine::Rank r) const { return group(r, {Axis::ep}); }
  // Replicas of the same dense parameters: all of dp (ep × dp/ep).
  std::vector<engine::Rank> dp_group(engine::Rank r) const {
    return group(r, {Axis::ep, Axis::dp});
  }
  // Replicas of the same experts.
  std::vector<engine::Rank> expert_dp_group(engine::Rank r) const { return group(r, {Axis::dp}); }

 private:
  std::array<int, 4> size_{};    // by Axis
  std::array<int, 4> stride_{};  // by Axis
};

}  // namespace clustersim::models
