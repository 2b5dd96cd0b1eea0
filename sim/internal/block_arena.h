// BlockArena: blocks of one size carved from 2 MiB chunks of their own,
// which the kernel is asked to back with transparent huge pages
// (madvise(MADV_HUGEPAGE); where the system does not offer them, plain pages
// as before). For the simulator's endpoints: a world of 1024 ranks has
// thousands, each several KiB, read at every step of their rank; from the
// general heap they lie scattered among the ranks' other state and cost a
// TLB miss per visit, packed into huge pages they do not. Freed blocks are
// reused; chunks are kept for the life of the process. Thread-safe.
//
// Every free block lies in one of the chunks, at a whole number of blocks
// from its start and before the unused part of the newest chunk, and is on
// the free list once.
#ifndef WEFT_SIM_INTERNAL_BLOCK_ARENA_H_
#define WEFT_SIM_INTERNAL_BLOCK_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sim/internal/check_cadence.h"

namespace weft::sim::internal {

class BlockArena {
 public:
  // Each chunk: one huge page on x86-64 and arm64 Linux.
  static constexpr size_t kChunkBytes = size_t{2} << 20;

  // REQUIRES: 0 < block_bytes <= kChunkBytes.
  explicit BlockArena(size_t block_bytes);
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;

  // A block of block_bytes (64-byte aligned), or nullptr when no memory
  // could be mapped.
  void* allocate();
  // REQUIRES: `block` came from allocate() and was not released since.
  void release(void* block);
  // True when `p` lies in one of this arena's chunks.
  bool owns(const void* p) const;

  // O(free blocks * log + chunks).
  void check_invariants() const;

 private:
  // allocate() and release() run for every endpoint opened and closed,
  // thousands in a large world: the block they touch is checked each
  // time, the whole free list every kFullCheckEvery calls (see
  // CheckCadence).
  static constexpr uint32_t kFullCheckEvery = 64;

  bool add_chunk();
  // True when `p` is the start of a block carved from a chunk. mu_ held.
  bool is_block(const void* p) const;
  // check_invariants() with mu_ held.
  void check_locked() const;
  // The checks after allocate() or release() of `block`. mu_ held.
  void check_after(const void* block);

  const size_t block_bytes_;
  mutable std::mutex mu_;
  std::vector<void*> free_;
  std::vector<char*> chunks_;
  char* next_ = nullptr;  // unused part of the newest chunk
  char* end_ = nullptr;
  CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_BLOCK_ARENA_H_
