// engine/alloc/huge_page_new.cpp, the programs' operator new: large allocations are advised huge
// pages, small ones are not, and running out of memory behaves as the default operator new
// ([new.delete.single]: the new-handler is called until it gives up, then std::bad_alloc).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <new>

#include "../engine/huge_pages_test_helpers.hpp"

namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

const void* first_whole_huge_page(const void* p) {
  return reinterpret_cast<const void*>((reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) &
                                       ~(kHuge - 1));
}

TEST(HugePageNew, AnAllocationOf4MiBOrMoreIsAdvisedHugePages) {
  if (!clustersim::test::transparent_huge_pages_on_request())
    GTEST_SKIP() << "no transparent huge pages";
  const auto large = std::make_unique<char[]>(std::size_t{8} << 20);
  EXPECT_TRUE(clustersim::test::advised_huge(first_whole_huge_page(large.get())));
  const auto array = std::make_unique<std::uint64_t[]>(std::size_t{1} << 20);  // new[], 8 MiB
  EXPECT_TRUE(clustersim::test::advised_huge(first_whole_huge_page(array.get())));
}

TEST(HugePageNew, ASmallAllocationIsNotAdvised) {
  if (!clustersim::test::transparent_huge_pages_on_request())
    GTEST_SKIP() << "no transparent huge pages";
  // 16 bytes under the 4 MiB threshold: mapped on its own by malloc (above its mmap
  // threshold), so no neighbour's advice covers it, and 16-byte aligned, so it holds a whole
  // 2 MiB page that the advice would have covered.
  const std::size_t bytes = (std::size_t{4} << 20) - 16;
  const auto small = std::make_unique<char[]>(bytes);
  const void* page = first_whole_huge_page(small.get());
  ASSERT_LE(reinterpret_cast<std::uintptr_t>(page) + kHuge,
            reinterpret_cast<std::uintptr_t>(small.get()) + bytes);
  EXPECT_FALSE(clustersim::test::advised_huge(page));
}

int handler_calls = 0;

TEST(HugePageNew, CallsTheNewHandlerUntilItGivesUpThenThrowsBadAlloc) {
  handler_calls = 0;
  std::set_new_handler([] {
    ++handler_calls;
    if (handler_calls == 2) std::set_new_handler(nullptr);  // gives up after a second try
  });
  volatile std::size_t impossible = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_THROW(static_cast<void>(::operator new(impossible)), std::bad_alloc);
  EXPECT_EQ(handler_calls, 2);
  EXPECT_EQ(std::get_new_handler(), nullptr);
}

}  // namespace
