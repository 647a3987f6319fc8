// engine/huge_pages.hpp: which part of a range gets the huge-page advice, read back from the
// kernel's own account of the mappings (/proc/self/smaps).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <vector>

#include "engine/huge_pages.hpp"
#include "huge_pages_test_helpers.hpp"

namespace clustersim::engine {
namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

std::uintptr_t align_up(std::uintptr_t a) {
  return (a + kHuge - 1) & ~(kHuge - 1);
}

// An untouched anonymous mapping of `bytes`, unmapped at the end of the test.
struct Mapping {
  explicit Mapping(std::size_t bytes) : size(bytes) {
    base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::uintptr_t at() const { return reinterpret_cast<std::uintptr_t>(base); }
  void* base;
  std::size_t size;
};

TEST(HugePages, AdvisesTheWhole2MiBPagesInsideTheRangeAndNothingAroundThem) {
  if (!test::transparent_huge_pages_on_request()) GTEST_SKIP() << "no transparent huge pages";
  // 16 MiB mapped; the range starts one small page past a 2 MiB boundary and is 8 MiB long, so
  // its whole huge pages are the three from the next boundary on: [a + 2 MiB, a + 8 MiB).
  Mapping m(16u << 20);
  ASSERT_NE(m.base, MAP_FAILED);
  const std::uintptr_t a = align_up(m.at());
  const std::uintptr_t data = a + 4096;
  advise_huge_pages(reinterpret_cast<void*>(data), 8u << 20);
  const auto p = [](std::uintptr_t x) { return reinterpret_cast<const void*>(x); };
  EXPECT_FALSE(test::advised_huge(p(data)));  // the partial page before the first boundary
  EXPECT_FALSE(test::advised_huge(p(a + kHuge - 1)));
  EXPECT_TRUE(test::advised_huge(p(a + kHuge)));  // first whole page
  EXPECT_TRUE(test::advised_huge(p(a + 4 * kHuge - 1)));
  EXPECT_FALSE(test::advised_huge(p(a + 4 * kHuge)));  // data + 8 MiB ends 4 KiB past it
}

TEST(HugePages, LeavesARangeWithoutAWhole2MiBPageAlone) {
  if (!test::transparent_huge_pages_on_request()) GTEST_SKIP() << "no transparent huge pages";
  Mapping m(8u << 20);
  ASSERT_NE(m.base, MAP_FAILED);
  const std::uintptr_t a = align_up(m.at());
  // 2 MiB - 8 KiB starting 4 KiB past a boundary: no whole huge page inside.
  advise_huge_pages(reinterpret_cast<void*>(a + 4096), kHuge - 8192);
  for (std::uintptr_t x = m.at(); x < m.at() + m.size; x += 4096)
    ASSERT_FALSE(test::advised_huge(reinterpret_cast<const void*>(x))) << x - m.at();
  advise_huge_pages(nullptr, 64u << 20);  // and a null range is no range
}

TEST(HugePages, ReserveHugeReservesAndAdvisesTheStorage) {
  if (!test::transparent_huge_pages_on_request()) GTEST_SKIP() << "no transparent huge pages";
  std::vector<std::uint64_t> v{7};
  reserve_huge(v, std::size_t{3} << 20);  // 24 MiB
  ASSERT_GE(v.capacity(), std::size_t{3} << 20);
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], 7u);
  const std::uintptr_t first = align_up(reinterpret_cast<std::uintptr_t>(v.data()));
  EXPECT_TRUE(test::advised_huge(reinterpret_cast<const void*>(first)));
  EXPECT_TRUE(test::advised_huge(reinterpret_cast<const void*>(first + 20 * (kHuge / 2))));
}

}  // namespace
}  // namespace clustersim::engine
