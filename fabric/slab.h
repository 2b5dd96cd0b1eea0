// Slab and Frame: the memory fabrics send from and receive into. A Slab is
// either one page-aligned mmap region weft maps and registers with a fabric
// once (Fabric::create_slab), or a caller's own memory registered for
// sending from and receiving into directly (Fabric::register_memory; the
// slab borrows it and never frees it). Frames are views carved out of
// either. Apple allows ~100 memory regions per device, so weft registers
// its own memory as a few slabs, and fabrics keep user registrations within
// that budget (docs/architecture.md, "Registered user memory").
#ifndef WEFT_FABRIC_SLAB_H_
#define WEFT_FABRIC_SLAB_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"

namespace weft {

class Slab;

// A view of bytes [offset, offset + bytes) of a slab. Cheap to copy; does
// not own memory. A default Frame is empty and belongs to no slab.
class Frame {
 public:
  Frame() = default;

  const Slab* slab() const { return slab_; }
  uint64_t offset() const { return offset_; }
  uint32_t bytes() const { return bytes_; }
  // Inline (defined below Slab): every frame sent or received asks it.
  std::byte* data() const;
  std::span<std::byte> span() const { return {data(), bytes_}; }

  // The sub-view [offset, offset + bytes) of this frame. Inline: a lane
  // splits every frame of a two-part post into header and payload.
  // REQUIRES: offset + bytes <= this->bytes().
  Frame sub(uint32_t offset, uint32_t bytes) const {
    assert(uint64_t{offset} + bytes <= bytes_);
    return Frame(slab_, offset_ + offset, bytes);
  }

  friend bool operator==(const Frame&, const Frame&) = default;

 private:
  friend class Slab;
  Frame(const Slab* slab, uint64_t offset, uint32_t bytes)
      : slab_(slab), offset_(offset), bytes_(bytes) {}

  const Slab* slab_ = nullptr;
  uint64_t offset_ = 0;
  uint32_t bytes_ = 0;
};

class Slab {
 public:
  // Largest slab weft maps (bounded so a bad size is an error, not an OOM).
  static constexpr uint64_t kMaxBytes = uint64_t{16} << 30;

  // Maps `bytes` rounded up to whole pages, zero-filled.
  static absl::StatusOr<std::unique_ptr<Slab>> create(uint64_t bytes);
  // A slab over memory the caller mapped (`bytes` from `data`, page
  // aligned, e.g. shared memory another process also maps); the slab owns
  // the mapping and unmaps it when destroyed.
  static std::unique_ptr<Slab> adopt_mapping(std::byte* data, uint64_t bytes);
  // A slab over `bytes` of memory at `data` that the caller owns (any
  // alignment; a user buffer): never unmapped or freed by the slab.
  // REQUIRES: data != nullptr, 0 < bytes <= kMaxBytes.
  static std::unique_ptr<Slab> borrow(std::byte* data, uint64_t bytes);

  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;
  ~Slab();

  std::byte* data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  // Process-unique id, so fabrics can find their registration of a slab
  // without comparing addresses.
  uint64_t id() const { return id_; }
  // False for a borrowed slab (user memory), true for one weft mapped.
  bool owns_memory() const { return owns_memory_; }

  // The frame [offset, offset + bytes); InvalidArgument outside the slab.
  absl::StatusOr<Frame> frame(uint64_t offset, uint32_t bytes) const;
  // True when `frame` lies inside this slab. Inline: fabrics ask it at
  // every post.
  bool contains(const Frame& frame) const {
    return frame.slab() == this && frame.offset() <= bytes_ &&
           frame.bytes() <= bytes_ - frame.offset();
  }

 private:
  Slab(std::byte* data, uint64_t bytes, uint64_t id, bool owns_memory)
      : data_(data), bytes_(bytes), id_(id), owns_memory_(owns_memory) {}

  std::byte* data_;
  uint64_t bytes_;
  uint64_t id_;
  bool owns_memory_;
};

inline std::byte* Frame::data() const {
  return slab_ == nullptr ? nullptr : slab_->data() + offset_;
}

}  // namespace weft

#endif  // WEFT_FABRIC_SLAB_H_
