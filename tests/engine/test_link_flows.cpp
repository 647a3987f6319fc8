// LinkFlows (engine/network/link_flows.hpp), the flow model's per-link list of active flows: the
// same elements in the same order as a std::vector under push_back and swap-remove, whether it
// holds them inline (up to four) or on the heap, checked against a std::vector kept alongside.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/network/link_flows.hpp"

namespace {

using clustersim::engine::detail::LinkFlows;

std::vector<std::uint32_t> elements_of(const LinkFlows& l) {
  return {l.begin(), l.end()};
}

TEST(LinkFlows, KeepsAVectorsOrderUnderPushBackAndSwapRemove) {
  LinkFlows l;
  EXPECT_EQ(l.size(), 0u);
  EXPECT_EQ(l.begin(), l.end());
  for (std::uint32_t f = 10; f < 16; ++f)  // six: past the four held inline
    l.push_back(f);
  EXPECT_EQ(elements_of(l), (std::vector<std::uint32_t>{10, 11, 12, 13, 14, 15}));
  // Remove 11 the flow model's way: the last one takes its place.
  l.set(1, l.back());
  l.pop_back();
  EXPECT_EQ(elements_of(l), (std::vector<std::uint32_t>{10, 15, 12, 13, 14}));
  EXPECT_EQ(l[1], 15u);
  EXPECT_EQ(l.back(), 14u);
  EXPECT_EQ(l.seen, 0u);
}

TEST(LinkFlows, MatchesAVectorThroughRandomPushesAndRemovals) {
  std::mt19937 rng(5);
  std::vector<LinkFlows> links(8);
  std::vector<std::vector<std::uint32_t>> want(8);
  std::uint32_t next = 0;
  for (int step = 0; step < 100'000; ++step) {
    const std::size_t k = rng() % links.size();
    // Pushes slightly outnumber removals, so lists grow past the inline four now and then.
    if (want[k].empty() || rng() % 100 < 52) {
      links[k].push_back(next);
      want[k].push_back(next++);
    } else {
      const std::uint32_t at = static_cast<std::uint32_t>(rng() % want[k].size());
      links[k].set(at, links[k].back());
      links[k].pop_back();
      want[k][at] = want[k].back();
      want[k].pop_back();
    }
    ASSERT_EQ(elements_of(links[k]), want[k]);
  }
  std::size_t longest = 0;
  for (const auto& w : want)
    longest = std::max(longest, w.size());
  EXPECT_GT(longest, 4u);  // the heap case was exercised
}

}  // namespace
