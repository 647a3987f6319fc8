#include "models/rank_layout.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim::models {

namespace {
int axis_of(const std::string& name) {
  if (name == "tp") return 0;
  if (name == "ep") return 1;
  if (name == "dp") return 2;
  if (name == "pp") return 3;
  if (name == "cp") return 4;
  throw std::invalid_argument("parallel.order: unknown axis '" + name +
                              "'; allowed: tp, cp, ep, dp, pp");
}
}  // namespace

RankLayout::RankLayout(int tp, int ep, int dp, int pp, const std::vector<std::string>& order,
                       int cp) {
  if (tp < 1 || ep < 1 || dp < 1 || pp < 1 || cp < 1 || dp % ep != 0)
    throw std::invalid_argument("rank layout: sizes must be positive and ep must divide dp");
  size_ = {tp, ep, dp / ep, pp, cp};
  std::vector<std::string> full = order;
  if (std::find(full.begin(), full.end(), "cp") == full.end()) {
    const auto tp_at = std::find(full.begin(), full.end(), "tp");
    full.insert(tp_at == full.end() ? full.begin() : tp_at + 1, "cp");
  }
  std::array<bool, kNumAxes> seen{};
  int stride = 1;
  for (const auto& name : full) {
    const int a = axis_of(name);
    if (seen[a]) throw std::invalid_argument("parallel.order: '" + name + "' appears twice");
    seen[a] = true;
    stride_[a] = stride;
    stride *= size_[a];
  }
  if (!std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }))
    throw std::invalid_argument("parallel.order: must list each of tp, ep, dp, pp once");
}

RankCoords RankLayout::coords(engine::Rank rank) const {
  auto along = [&](int a) { return static_cast<int>(rank / stride_[a]) % size_[a]; };
  return {along(0), along(1), along(2), along(3), along(4)};
}

engine::Rank RankLayout::rank(const RankCoords& c) const {
  return static_cast<engine::Rank>(c.tp * stride_[0] + c.ep * stride_[1] + c.dp * stride_[2] +
                                   c.pp * stride_[3] + c.cp * stride_[4]);
}

std::vector<engine::Rank> RankLayout::group(engine::Rank r,
                                            std::initializer_list<Axis> axes) const {
  std::vector<engine::Rank> ranks{r};
  for (Axis axis : axes) {
    const int a = static_cast<int>(axis);
    const int here = static_cast<int>(r / stride_[a]) % size_[a];
    std::vector<engine::Rank> grown;
    for (engine::Rank base : ranks)
      for (int i = 0; i < size_[a]; ++i)
        grown.push_back(
            static_cast<engine::Rank>(static_cast<int>(base) + (i - here) * stride_[a]));
    ranks = std::move(grown);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

}  // namespace clustersim::models
