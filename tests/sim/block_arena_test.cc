// BlockArena: blocks of one size, 64-byte aligned and distinct, carved from
// 2 MiB chunks (more chunks as needed); a released block is handed out
// again; owns() tells its blocks from other memory.
#include "sim/internal/block_arena.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace weft::sim::internal {
namespace {

TEST(BlockArena, BlocksAreAlignedDistinctAndOwned) {
  constexpr size_t kBytes = 1000;  // rounded up to 1024
  BlockArena arena(kBytes);
  // More than one chunk's worth: 2 MiB / 1024 = 2048 blocks per chunk.
  constexpr size_t kBlocks = 3000;
  std::vector<void*> blocks;
  std::set<uintptr_t> starts;
  for (size_t i = 0; i < kBlocks; ++i) {
    void* b = arena.allocate();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
    EXPECT_TRUE(arena.owns(b));
    std::memset(b, static_cast<int>(i), kBytes);  // the whole block is usable
    blocks.push_back(b);
    starts.insert(reinterpret_cast<uintptr_t>(b));
  }
  EXPECT_EQ(starts.size(), kBlocks);
  // No two blocks overlap: consecutive starts are at least a block apart.
  uintptr_t last = 0;
  for (uintptr_t s : starts) {
    if (last != 0) {
      EXPECT_GE(s - last, 1024u);
    }
    last = s;
  }
  // Each block still holds what was written into it.
  for (size_t i = 0; i < kBlocks; ++i) {
    const auto* p = static_cast<const unsigned char*>(blocks[i]);
    EXPECT_EQ(p[0], static_cast<unsigned char>(i));
    EXPECT_EQ(p[kBytes - 1], static_cast<unsigned char>(i));
  }
  const auto heap = std::make_unique<char[]>(kBytes);
  EXPECT_FALSE(arena.owns(heap.get()));
}

TEST(BlockArena, AReleasedBlockIsHandedOutAgain) {
  BlockArena arena(256);
  void* a = arena.allocate();
  void* b = arena.allocate();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  arena.release(a);
  EXPECT_EQ(arena.allocate(), a);
  EXPECT_NE(arena.allocate(), b);
}

}  // namespace
}  // namespace weft::sim::internal
