#include "sim_server/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_format.h"

namespace weft::sim_server {
namespace {

uint64_t whole_pages(uint64_t bytes) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

absl::Status errno_error(const char* what) {
  const int err = errno;
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s failed: %s (errno %d)", what, std::strerror(err), err));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Slab>> create_shared_slab(uint64_t bytes,
                                                         int* fd) {
  if (bytes == 0 || bytes > Slab::kMaxBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "slab size %u bytes is outside 1..%u", bytes, Slab::kMaxBytes));
  }
  const uint64_t rounded = whole_pages(bytes);
  const int f = memfd_create("weft-sim-slab", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (f < 0) return errno_error("memfd_create");
  // Sealed at its size: the server maps it too, and a file that shrank
  // under a mapping would fault there.
  if (ftruncate(f, static_cast<off_t>(rounded)) != 0 ||
      fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    absl::Status s = errno_error("sizing and sealing a shared slab");
    ::close(f);
    return s;
  }
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  if (p == MAP_FAILED) {
    absl::Status s = errno_error("mmap of a shared slab");
    ::close(f);
    return s;
  }
  *fd = f;
  return Slab::adopt_mapping(static_cast<std::byte*>(p), rounded);
}

absl::StatusOr<std::unique_ptr<Slab>> map_shared_slab(int fd, uint64_t bytes) {
  // Only a memfd sealed against shrinking: one that could shrink under the
  // mapping would make the server fault when it touches the lost pages.
  struct stat st {};
  const int seals = fcntl(fd, F_GET_SEALS);
  if (bytes == 0 || bytes > Slab::kMaxBytes || fstat(fd, &st) != 0 ||
      static_cast<uint64_t>(st.st_size) < bytes || seals < 0 ||
      (seals & F_SEAL_SHRINK) == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a shared slab of %u bytes that is not a memfd sealed at least that "
        "long",
        bytes));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno_error("mmap of a client's slab");
  return Slab::adopt_mapping(static_cast<std::byte*>(p), bytes);
}

MessageRing::MessageRing(std::byte* memory, bool initialise)
    : head_(reinterpret_cast<Index*>(memory)),
      tail_(reinterpret_cast<Index*>(memory + 64)),
      data_(memory + 128) {
  if (initialise) {
    new (head_) Index;
    new (tail_) Index;
  }
}

void MessageRing::copy_in(uint64_t at, std::span<const std::byte> bytes) {
  const uint64_t start = at % kDataBytes;
  const uint64_t first = std::min<uint64_t>(bytes.size(), kDataBytes - start);
  std::memcpy(data_ + start, bytes.data(), first);
  std::memcpy(data_, bytes.data() + first, bytes.size() - first);
}

void MessageRing::copy_out(uint64_t at, std::byte* out, uint64_t n) const {
  const uint64_t start = at % kDataBytes;
  const uint64_t first = std::min<uint64_t>(n, kDataBytes - start);
  std::memcpy(out, data_ + start, first);
  std::memcpy(out + first, data_, n - first);
}

bool MessageRing::try_write(MsgType type,
                            std::span<const std::span<const std::byte>> parts) {
  Header header;
  header.type = static_cast<uint32_t>(type);
  for (const auto& p : parts) header.bytes += p.size();
  const uint64_t need = sizeof(Header) + header.bytes;
  const uint64_t head = head_->value.load(std::memory_order_relaxed);
  const uint64_t tail = tail_->value.load(std::memory_order_acquire);
  if (need > kDataBytes - (head - tail)) return false;
  uint64_t at = head;
  copy_in(at, bytes_of(header));
  at += sizeof(Header);
  for (const auto& p : parts) {
    copy_in(at, p);
    at += p.size();
  }
  head_->value.store(at, std::memory_order_release);
  return true;
}

absl::StatusOr<std::optional<Message>> MessageRing::read() {
  const uint64_t tail = tail_->value.load(std::memory_order_relaxed);
  const uint64_t head = head_->value.load(std::memory_order_acquire);
  if (head - tail > kDataBytes) {
    return absl::InvalidArgumentError("the post ring's indices are corrupt");
  }
  if (head - tail < sizeof(Header)) return std::optional<Message>();
  Header header;
  copy_out(tail, reinterpret_cast<std::byte*>(&header), sizeof(header));
  if (header.magic != kMagic ||
      header.type < static_cast<uint32_t>(MsgType::kHello) ||
      header.type > static_cast<uint32_t>(MsgType::kFatal) ||
      header.bytes > kDataBytes - sizeof(Header)) {
    return absl::InvalidArgumentError(
        "the post ring holds bytes that are no message");
  }
  if (head - tail < sizeof(Header) + header.bytes) {
    return absl::InvalidArgumentError(
        "the post ring's last message is cut short");
  }
  Message m;
  m.type = static_cast<MsgType>(header.type);
  m.body.resize(header.bytes);
  copy_out(tail + sizeof(Header), m.body.data(), header.bytes);
  tail_->value.store(tail + sizeof(Header) + header.bytes,
                     std::memory_order_release);
  return std::optional<Message>(std::move(m));
}

}  // namespace weft::sim_server
