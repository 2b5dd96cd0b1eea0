// PayloadPool: byte buffers for frames in flight whose sender may already
// reuse its own frame (see FrameLoan), reused so a steady stream of messages
// allocates nothing (and clears no memory) once the pool has warmed up.
// Every buffer is either in use (acquired, not yet released) or on the free
// list, never both; one in use is held by exactly one frame in flight (see
// Transport).
#ifndef WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_
#define WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "fabric/assert.h"
#include "sim/internal/check_cadence.h"

namespace weft::sim::internal {

class PayloadPool {
 public:
  // A buffer holding a copy of `bytes` (followed by `more`: the second
  // part of a two-part message), until release().
  uint32_t acquire(std::span<const std::byte> bytes,
                   std::span<const std::byte> more = {}) {
    uint32_t id;
    if (free_.empty()) {
      id = static_cast<uint32_t>(buffers_.size());
      buffers_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    Buffer& b = buffers_[id];
    const size_t size = bytes.size() + more.size();
    if (b.capacity < size) {
      // Uninitialised storage: every byte is written just below, and a
      // buffer only grows, so reuse never clears memory.
      b.capacity = std::bit_ceil(size);
      b.data.reset(new std::byte[b.capacity]);
    }
    if (!bytes.empty()) std::memcpy(b.data.get(), bytes.data(), bytes.size());
    if (!more.empty()) {
      std::memcpy(b.data.get() + bytes.size(), more.data(), more.size());
    }
    b.size = size;
    b.in_use = true;
    check_after(id);
    return id;
  }
  // REQUIRES: `id` is in use.
  void release(uint32_t id) {
    WEFT_ASSERT(id < buffers_.size() && buffers_[id].in_use,
                "a payload buffer released that is not in use");
    buffers_[id].in_use = false;
    free_.push_back(id);
    check_after(id);
  }
  std::span<const std::byte> bytes(uint32_t id) const {
    return {buffers_[id].data.get(), buffers_[id].size};
  }
  // Buffers acquired and not yet released.
  size_t in_use() const { return buffers_.size() - free_.size(); }

  // O(buffers).
  void check_invariants() const {
    std::vector<bool> listed(buffers_.size(), false);
    for (const uint32_t id : free_) {
      WEFT_ASSERT(id < buffers_.size() && !listed[id],
                  "the payload pool's free list holds a buffer twice");
      listed[id] = true;
    }
    for (size_t id = 0; id < buffers_.size(); ++id) {
      const Buffer& b = buffers_[id];
      WEFT_ASSERT(b.in_use != listed[id],
                  "a payload buffer is both in use and free, or neither");
      WEFT_ASSERT(b.size <= b.capacity && (b.capacity == 0 || b.data),
                  "a payload buffer holds more bytes than it has room for");
    }
  }

 private:
  // acquire() and release() run for every frame whose loan ends in
  // flight: the buffer they touched is checked each time, the whole pool
  // every kFullCheckEvery calls (see CheckCadence).
  static constexpr uint32_t kFullCheckEvery = 64;
  void check_after(uint32_t id) {
    if constexpr (weft::kChecksInvariants) {
      const Buffer& b = buffers_[id];
      WEFT_ASSERT(free_.size() <= buffers_.size(),
                  "more free payload buffers than buffers");
      WEFT_ASSERT(b.size <= b.capacity && (b.capacity == 0 || b.data),
                  "a payload buffer holds more bytes than it has room for");
      if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
    }
  }

  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    size_t capacity = 0;
    size_t size = 0;
    bool in_use = false;
  };
  std::vector<Buffer> buffers_;
  std::vector<uint32_t> free_;
  CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_
