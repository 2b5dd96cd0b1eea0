#include "jaccl/internal/all_gather_bootstrap.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/assert.h"

namespace jaccl::internal {

AllGatherBootstrap::AllGatherBootstrap(uint32_t rank, uint32_t size,
                                       AllGatherFn all_gather)
    : rank_(rank), size_(size), all_gather_(std::move(all_gather)) {
  WEFT_ASSERT(rank_ < size_, "rank outside the group");
  WEFT_ASSERT(static_cast<bool>(all_gather_), "no all-gather function");
}

absl::Status AllGatherBootstrap::call(const void* src, void* dst,
                                      size_t n_bytes) {
  try {
    all_gather_(static_cast<const char*>(src), static_cast<char*>(dst),
                n_bytes);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrFormat(
        "rank %u: the all-gather function given to jaccl::Config threw: %s",
        rank_, e.what()));
  } catch (...) {
    return absl::UnavailableError(absl::StrFormat(
        "rank %u: the all-gather function given to jaccl::Config threw "
        "something that is not a std::exception",
        rank_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<uint8_t>>>
AllGatherBootstrap::all_gather(std::span<const uint8_t> mine,
                               weft::TimeNs /*timeout_ns*/) {
  // An oversized blob (this rank's too) is refused after the lengths are
  // exchanged, so every rank refuses it alike instead of some waiting in
  // the function for a rank that left.
  const uint64_t my_length = mine.size();
  std::vector<uint64_t> lengths(size_);
  if (absl::Status s = call(&my_length, lengths.data(), sizeof(my_length));
      !s.ok()) {
    return s;
  }
  if (my_length > kMaxBlobBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %u: a side-channel blob of %u bytes is more than %u", rank_,
        my_length, kMaxBlobBytes));
  }
  for (uint32_t r = 0; r < size_; ++r) {
    if (lengths[r] > kMaxBlobBytes) {
      return absl::DataLossError(absl::StrFormat(
          "rank %u: rank %u's side-channel blob is %u bytes, more than %u: "
          "every rank must call the all-gather function in the same order, "
          "each with the same byte count",
          rank_, r, lengths[r], kMaxBlobBytes));
    }
  }
  const size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<uint8_t> padded(longest);
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<uint8_t> all(longest * size_);
  if (longest > 0) {
    if (absl::Status s = call(padded.data(), all.data(), longest); !s.ok()) {
      return s;
    }
  }
  std::vector<std::vector<uint8_t>> blobs(size_);
  for (uint32_t r = 0; r < size_; ++r) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(r * longest);
    blobs[r].assign(first, first + static_cast<std::ptrdiff_t>(lengths[r]));
  }
  return blobs;
}

}  // namespace jaccl::internal
