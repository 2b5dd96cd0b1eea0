#include "sim/internal/block_arena.h"

#include <sys/mman.h>

#include <cassert>
#include <cstdint>

namespace weft::sim::internal {
namespace {

constexpr size_t kAlignBytes = 64;  // a cache line

}  // namespace

BlockArena::BlockArena(size_t block_bytes)
    : block_bytes_((block_bytes + kAlignBytes - 1) / kAlignBytes *
                   kAlignBytes) {
  assert(block_bytes > 0 && block_bytes_ <= kChunkBytes);
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
  // Advice only: without transparent huge pages it fails, harmlessly.
  (void)madvise(chunk, kChunkBytes, MADV_HUGEPAGE);
  chunks_.push_back(chunk);
  next_ = chunk;
  end_ = chunk + kChunkBytes;
  return true;
}

void* BlockArena::allocate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    void* block = free_.back();
    free_.pop_back();
    return block;
  }
  if (static_cast<size_t>(end_ - next_) < block_bytes_ && !add_chunk()) {
    return nullptr;
  }
  void* block = next_;
  next_ += block_bytes_;
  return block;
}

void BlockArena::release(void* block) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(block);
}

bool BlockArena::owns(const void* p) const {
  std::lock_guard<std::mutex> lock(mu_);
  const char* c = static_cast<const char*>(p);
  for (const char* chunk : chunks_) {
    if (c >= chunk && c < chunk + kChunkBytes) return true;
  }
  return false;
}

}  // namespace weft::sim::internal
