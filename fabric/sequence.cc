#include "fabric/sequence.h"

#include "absl/strings/str_format.h"

namespace weft {

std::string_view sequence_class_name(SequenceClass c) {
  switch (c) {
    case SequenceClass::kExpected: return "expected";
    case SequenceClass::kGap: return "gap";
    case SequenceClass::kReordered: return "reordered";
    case SequenceClass::kOld: return "old";
  }
  return "unknown";
}

SequenceCheck ReceiveChecker::check(uint32_t received) {
  SequenceCheck out;
  out.expected = expected_;
  out.received = received;
  const uint32_t ahead = received - expected_;  // modulo 2^32
  if (ahead == 0) {
    seen_ = (seen_ << 1) | 1;
    ++expected_;
    out.kind = SequenceClass::kExpected;
    return out;
  }
  if (ahead < 0x8000'0000u) {
    // Skipped `ahead` numbers: they are unseen, then `received` is seen.
    out.kind = SequenceClass::kGap;
    out.lost = ahead;
    seen_ = ahead + 1 >= kWindow ? 1 : (seen_ << (ahead + 1)) | 1;
    expected_ = received + 1;
    return out;
  }
  // Behind: distance back from expected_ - 1.
  const uint32_t back = expected_ - 1 - received;
  if (back < kWindow && (seen_ & (uint64_t{1} << back)) == 0) {
    seen_ |= uint64_t{1} << back;
    out.kind = SequenceClass::kReordered;
    return out;
  }
  out.kind = SequenceClass::kOld;
  return out;
}

absl::Status sequence_error(const SequenceCheck& check, ErrorPlace place) {
  place.cause = ErrorCause::kSequence;
  std::string what;
  switch (check.kind) {
    case SequenceClass::kGap:
      what = absl::StrFormat("%u frame(s) lost", check.lost);
      break;
    case SequenceClass::kReordered:
      what = "a frame arrived out of order";
      break;
    case SequenceClass::kOld:
      what = "a duplicate or replayed frame arrived";
      break;
    case SequenceClass::kExpected:
      what = "no error";
      break;
  }
  return make_error(
      absl::StatusCode::kDataLoss, place,
      absl::StrFormat("sequence %s: expected frame %u, received %u (%s); the "
                      "data was not used",
                      sequence_class_name(check.kind), check.expected,
                      check.received, what));
}

}  // namespace weft
