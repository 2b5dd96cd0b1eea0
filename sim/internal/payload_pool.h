// PayloadPool: byte buffers for frames in flight, reused so a steady stream
// of messages allocates nothing (and clears no memory) once the pool has
// warmed up. A buffer is reference counted because a duplicated frame
// arrives twice.
#ifndef WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_
#define WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace weft::sim::internal {

class PayloadPool {
 public:
  // A buffer holding a copy of `bytes`, with one reference.
  uint32_t acquire(std::span<const std::byte> bytes) {
    uint32_t id;
    if (free_.empty()) {
      id = static_cast<uint32_t>(buffers_.size());
      buffers_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    Buffer& b = buffers_[id];
    if (b.capacity < bytes.size()) {
      // Uninitialised storage: every byte is written just below, and a
      // buffer only grows, so reuse never clears memory.
      b.capacity = std::bit_ceil(bytes.size());
      b.data.reset(new std::byte[b.capacity]);
    }
    if (!bytes.empty()) std::memcpy(b.data.get(), bytes.data(), bytes.size());
    b.size = bytes.size();
    b.refs = 1;
    return id;
  }
  void add_ref(uint32_t id) { ++buffers_[id].refs; }
  void release(uint32_t id) {
    assert(buffers_[id].refs > 0);
    if (--buffers_[id].refs == 0) free_.push_back(id);
  }
  std::span<const std::byte> bytes(uint32_t id) const {
    return {buffers_[id].data.get(), buffers_[id].size};
  }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    size_t capacity = 0;
    size_t size = 0;
    uint32_t refs = 0;
  };
  std::vector<Buffer> buffers_;
  std::vector<uint32_t> free_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_
