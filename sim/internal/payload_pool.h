// PayloadPool: byte buffers for frames in flight whose sender may already
// reuse its own frame (see FrameLoan), reused so a steady stream of messages
// allocates nothing (and clears no memory) once the pool has warmed up.
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
  // A buffer holding a copy of `bytes`, until release().
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
    b.in_use = true;
    return id;
  }
  void release(uint32_t id) {
    assert(buffers_[id].in_use);
    buffers_[id].in_use = false;
    free_.push_back(id);
  }
  std::span<const std::byte> bytes(uint32_t id) const {
    return {buffers_[id].data.get(), buffers_[id].size};
  }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    size_t capacity = 0;
    size_t size = 0;
    bool in_use = false;
  };
  std::vector<Buffer> buffers_;
  std::vector<uint32_t> free_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_PAYLOAD_POOL_H_
