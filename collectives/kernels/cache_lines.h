// Cache lines: their size and prefetching a byte range line by line, for the
// reduction kernels and for the engine (which prefetches its next step when
// many ranks share a core).
#ifndef WEFT_COLLECTIVES_KERNELS_CACHE_LINES_H_
#define WEFT_COLLECTIVES_KERNELS_CACHE_LINES_H_

#include <cstddef>
#include <cstdint>

namespace weft::collectives::internal {

inline constexpr size_t kCacheLineBytes = 64;

// Calls fn(line) for the start of every cache line [p, p + bytes) touches.
template <typename Fn>
void for_each_line(const void* p, size_t bytes, Fn&& fn) {
  const auto first =
      reinterpret_cast<uintptr_t>(p) & ~uintptr_t{kCacheLineBytes - 1};
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t line = first; line < end; line += kCacheLineBytes) {
    fn(reinterpret_cast<const void*>(line));
  }
}

// Asks the cache for [p, p + bytes) without waiting for it (kForWrite: the
// lines are about to be written).
template <bool kForWrite = false>
void prefetch_bytes(const void* p, size_t bytes) {
  for_each_line(p, bytes, [](const void* line) {
    __builtin_prefetch(line, kForWrite ? 1 : 0);
  });
}

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_KERNELS_CACHE_LINES_H_
