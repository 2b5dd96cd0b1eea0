#include "fabric/slab.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft {
namespace {

uint64_t next_slab_id() {
  static std::atomic<uint64_t> next_id{1};
  return next_id.fetch_add(1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Slab>> Slab::create(uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "slab size %u bytes is outside 1..%u; ask for less memory or carve "
        "smaller frames",
        bytes, kMaxBytes));
  }
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t rounded = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of a %u-byte slab failed: %s (errno %d); free "
                        "memory or use smaller frames",
                        rounded, std::strerror(err), err));
  }
  return std::unique_ptr<Slab>(
      new Slab(static_cast<std::byte*>(p), rounded, next_slab_id(), true));
}

std::unique_ptr<Slab> Slab::adopt_mapping(std::byte* data, uint64_t bytes) {
  return std::unique_ptr<Slab>(new Slab(data, bytes, next_slab_id(), true));
}

std::unique_ptr<Slab> Slab::borrow(std::byte* data, uint64_t bytes) {
  assert(data != nullptr && bytes > 0 && bytes <= kMaxBytes);
  return std::unique_ptr<Slab>(new Slab(data, bytes, next_slab_id(), false));
}

Slab::~Slab() {
  if (owns_memory_) munmap(data_, bytes_);
}

absl::StatusOr<Frame> Slab::frame(uint64_t offset, uint32_t bytes) const {
  if (offset > bytes_ || bytes > bytes_ - offset) {
    return absl::InvalidArgumentError(
        absl::StrFormat("frame [%u, %u) lies outside slab %u of %u bytes",
                        offset, offset + bytes, id_, bytes_));
  }
  return Frame(this, offset, bytes);
}

}  // namespace weft
