// Blob: what a rank contributes to each side-channel exchange of a
// discovery, written and read with bounds checks. Every blob starts with a
// magic number, the protocol version, the blob's kind and the round, so a
// rank that is not in step with the others (or a peer of another version)
// is an error naming it, not a misread.
#ifndef WEFT_WIRING_INTERNAL_BLOB_H_
#define WEFT_WIRING_INTERNAL_BLOB_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace weft::wiring::internal {

enum class BlobKind : uint8_t {
  kDevices = 1,       // the rank's devices and addresses
  kDestinations = 2,  // a round's endpoints' destinations
  kReady = 3,         // a round's endpoints are connected, receives posted
  kHeard = 4,         // what a round's endpoints heard
};

class BlobWriter {
 public:
  BlobWriter(BlobKind kind, uint32_t round);
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v);
  void bytes(std::span<const uint8_t> v);
  void text(const std::string& v);  // u32 length, then the bytes
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class BlobReader {
 public:
  // Reads the header; a later status() says whether it matched
  // (`from_rank` names the sender in the message).
  BlobReader(std::span<const uint8_t> blob, BlobKind kind, uint32_t round,
             uint32_t from_rank);
  uint8_t u8();
  uint32_t u32();
  std::span<const uint8_t> bytes(size_t n);
  // REQUIRES of the caller: max_bytes bounds the text.
  std::string text(size_t max_bytes);
  // OK when everything read was there and (with `whole`) nothing is left;
  // otherwise FailedPrecondition naming the sender and what was wrong.
  absl::Status status(bool whole = true) const;

 private:
  void fail(const char* what);

  std::span<const uint8_t> blob_;
  size_t at_ = 0;
  uint32_t from_rank_;
  const char* error_ = nullptr;
};

}  // namespace weft::wiring::internal

#endif  // WEFT_WIRING_INTERNAL_BLOB_H_
