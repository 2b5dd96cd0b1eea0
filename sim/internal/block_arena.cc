#include "sim/internal/block_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <functional>

#include "fabric/assert.h"

namespace weft::sim::internal {
namespace {

constexpr size_t kAlignBytes = 64;  // a cache line

}  // namespace

BlockArena::BlockArena(size_t block_bytes)
    : block_bytes_((block_bytes + kAlignBytes - 1) / kAlignBytes *
                   kAlignBytes) {
  WEFT_ASSERT(block_bytes > 0 && block_bytes_ <= kChunkBytes,
              "a BlockArena's blocks must be 1 byte to 2 MiB");
}

bool BlockArena::add_chunk() {
  // Twice the size, so a 2 MiB-aligned chunk fits whatever address mmap
  // picks; the unaligned ends are given back.
  const size_t span = 2 * kChunkBytes;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kChunkBytes - 1) & ~(kChunkBytes - 1);
  if (aligned > start) munmap(p, aligned - start);
  const uintptr_t tail = aligned + kChunkBytes;
  if (start + span > tail)
    munmap(reinterpret_cast<void*>(tail), start + span - tail);
  char* chunk = reinterpret_cast<char*>(aligned);
  // Advice only: without transparent huge pages it fails, harmlessly (and
  // macOS has no such advice).
#ifdef MADV_HUGEPAGE
  (void)madvise(chunk, kChunkBytes, MADV_HUGEPAGE);
#endif
  chunks_.push_back(chunk);
  next_ = chunk;
  end_ = chunk + kChunkBytes;
  return true;
}

void* BlockArena::allocate() {
  std::lock_guard<std::mutex> lock(mu_);
  void* block = nullptr;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (static_cast<size_t>(end_ - next_) >= block_bytes_ || add_chunk()) {
    block = next_;
    next_ += block_bytes_;
  }
  check_after(block);
  return block;
}

void BlockArena::release(void* block) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(block);
  check_after(block);
}

bool BlockArena::owns(const void* p) const {
  std::lock_guard<std::mutex> lock(mu_);
  const char* c = static_cast<const char*>(p);
  for (const char* chunk : chunks_) {
    if (c >= chunk && c < chunk + kChunkBytes) return true;
  }
  return false;
}

bool BlockArena::is_block(const void* p) const {
  const char* c = static_cast<const char*>(p);
  for (size_t i = 0; i < chunks_.size(); ++i) {
    const char* chunk = chunks_[i];
    if (c < chunk || c >= chunk + kChunkBytes) continue;
    // Carved so far: the whole of an older chunk, up to next_ of the newest.
    const char* carved_end =
        i + 1 == chunks_.size() ? next_ : chunk + kChunkBytes;
    return static_cast<size_t>(c - chunk) % block_bytes_ == 0 &&
           block_bytes_ <= static_cast<size_t>(carved_end - c);
  }
  return false;
}

void BlockArena::check_after(const void* block) {
  if constexpr (weft::kChecksInvariants) {
    WEFT_ASSERT(block == nullptr || is_block(block),
                "a block allocated or released is not one of the arena's");
    WEFT_ASSERT(next_ <= end_, "a BlockArena carved past its newest chunk");
    if (full_checks_.due()) check_locked();
  }
}

void BlockArena::check_invariants() const {
  std::lock_guard<std::mutex> lock(mu_);
  check_locked();
}

void BlockArena::check_locked() const {
  WEFT_ASSERT(block_bytes_ % kAlignBytes == 0 && block_bytes_ > 0 &&
                  block_bytes_ <= kChunkBytes,
              "a BlockArena's block size is not whole cache lines of a chunk");
  for (const char* chunk : chunks_) {
    WEFT_ASSERT(reinterpret_cast<uintptr_t>(chunk) % kChunkBytes == 0,
                "a BlockArena chunk is not aligned to its size");
  }
  WEFT_ASSERT(chunks_.empty() ? next_ == nullptr && end_ == nullptr
                              : chunks_.back() <= next_ && next_ <= end_ &&
                                    end_ == chunks_.back() + kChunkBytes,
              "a BlockArena's unused part is not in its newest chunk");
  std::vector<void*> blocks = free_;
  std::sort(blocks.begin(), blocks.end(), std::less<void*>());
  WEFT_ASSERT(std::adjacent_find(blocks.begin(), blocks.end()) == blocks.end(),
              "a block is on a BlockArena's free list twice");
  for (const void* block : blocks) {
    WEFT_ASSERT(is_block(block),
                "a free block does not lie in the arena's carved chunks");
  }
}

}  // namespace weft::sim::internal
