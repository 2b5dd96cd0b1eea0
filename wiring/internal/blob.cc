#include "wiring/internal/blob.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft::wiring::internal {
namespace {

constexpr uint32_t kMagic = 0x57495245;  // "WIRE"
constexpr uint8_t kVersion = 1;

}  // namespace

BlobWriter::BlobWriter(BlobKind kind, uint32_t round) {
  u32(kMagic);
  u8(kVersion);
  u8(static_cast<uint8_t>(kind));
  u32(round);
}

void BlobWriter::u32(uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    bytes_.push_back(static_cast<uint8_t>(v >> shift));
  }
}

void BlobWriter::bytes(std::span<const uint8_t> v) {
  bytes_.insert(bytes_.end(), v.begin(), v.end());
}

void BlobWriter::text(const std::string& v) {
  u32(static_cast<uint32_t>(v.size()));
  for (char c : v) bytes_.push_back(static_cast<uint8_t>(c));
}

BlobReader::BlobReader(std::span<const uint8_t> blob, BlobKind kind,
                       uint32_t round, uint32_t from_rank)
    : blob_(blob), from_rank_(from_rank) {
  if (u32() != kMagic) {
    fail("is not a wiring probe's");
  } else if (u8() != kVersion) {
    fail("is of another wiring protocol version");
  } else if (u8() != static_cast<uint8_t>(kind)) {
    fail("is of another step (the ranks are out of step)");
  } else if (u32() != round) {
    fail("is of another round (the ranks disagree)");
  }
}

void BlobReader::fail(const char* what) {
  if (error_ == nullptr) error_ = what;
  at_ = blob_.size();
}

uint8_t BlobReader::u8() {
  if (at_ + 1 > blob_.size()) {
    fail("is cut short");
    return 0;
  }
  return blob_[at_++];
}

uint32_t BlobReader::u32() {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v = (v << 8) | u8();
  return v;
}

std::span<const uint8_t> BlobReader::bytes(size_t n) {
  if (blob_.size() - at_ < n) {
    fail("is cut short");
    return {};
  }
  std::span<const uint8_t> v = blob_.subspan(at_, n);
  at_ += n;
  return v;
}

std::string BlobReader::text(size_t max_bytes) {
  const uint32_t n = u32();
  if (n > max_bytes) {
    fail("holds a name longer than allowed");
    return {};
  }
  std::span<const uint8_t> v = bytes(n);
  return std::string(v.begin(), v.end());
}

absl::Status BlobReader::status(bool whole) const {
  const char* what = error_;
  if (what == nullptr && whole && at_ != blob_.size()) {
    what = "has bytes past its end";
  }
  if (what == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "wiring probe: what rank %u sent over the side channel %s; run the "
      "same weft version on every rank, all of them in the same command",
      from_rank_, what));
}

}  // namespace weft::wiring::internal
