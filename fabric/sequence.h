// Sequence numbers per pair. Every SEND carries its pair's next number as
// the 32-bit immediate; the receiver classifies each arrival so nothing is
// used as data unless it is the frame it should be. Arithmetic is modulo
// 2^32: wrapping from 0xffffffff to 0 is normal.
#ifndef WEFT_FABRIC_SEQUENCE_H_
#define WEFT_FABRIC_SEQUENCE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fabric/errors.h"

namespace weft {

// Next number to send on one pair.
class SendSequence {
 public:
  explicit SendSequence(uint32_t first = 0) : next_(first) {}
  // Returns the number for the next SEND and advances.
  uint32_t take() { return next_++; }
  uint32_t peek() const { return next_; }

 private:
  uint32_t next_;
};

enum class SequenceClass : uint8_t {
  kExpected,   // the next number
  kGap,        // ahead of the next number: `lost` frames are missing
  kReordered,  // behind, but one we skipped over and have not seen: late
  kOld,        // behind and already seen (duplicate) or too old to know
};

std::string_view sequence_class_name(SequenceClass c);

struct SequenceCheck {
  SequenceClass kind = SequenceClass::kExpected;
  uint32_t expected = 0;  // what the checker expected before this arrival
  uint32_t received = 0;
  uint32_t lost = 0;      // kGap only: received - expected

  bool ok() const { return kind == SequenceClass::kExpected; }
};

// Classifies arrivals on one pair. Remembers the last kWindow numbers below
// the next expected one, to tell a late frame from a duplicate.
class ReceiveChecker {
 public:
  static constexpr uint32_t kWindow = 64;

  explicit ReceiveChecker(uint32_t first = 0) : expected_(first) {}

  // Classifies `received` and updates the state: an expected or gap arrival
  // moves the next expected number past it; a reordered one is marked seen.
  SequenceCheck check(uint32_t received);
  uint32_t expected() const { return expected_; }

 private:
  uint32_t expected_;
  // Bit i set: number expected_ - 1 - i has arrived.
  uint64_t seen_ = ~uint64_t{0};
};

// DataLoss naming the place, the class, and the expected and received
// numbers. REQUIRES: !check.ok().
absl::Status sequence_error(const SequenceCheck& check, ErrorPlace place);

}  // namespace weft

#endif  // WEFT_FABRIC_SEQUENCE_H_
