#include "collectives/group_options.h"

#include <array>
#include <bit>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace weft {
namespace {

constexpr std::array<std::string_view, kAlgorithmCount> kNames = {
    "auto", "mesh_exchange", "mesh_scatter", "ring"};

}  // namespace

std::string_view algorithm_name(Algorithm algorithm) {
  const auto i = static_cast<size_t>(algorithm);
  return i < kNames.size() ? kNames[i] : "unknown";
}

uint64_t mesh_exchange_limit(const GroupOptions& options, uint32_t ranks) {
  if (options.mesh_exchange_max_bytes != 0) {
    return options.mesh_exchange_max_bytes;
  }
  if (ranks <= 2) return UINT64_MAX;
  return kTb5MessageCostBytes * ranks / (ranks - 2);
}

bool parse_algorithm(std::string_view text, Algorithm* out) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) {
      *out = static_cast<Algorithm>(i);
      return true;
    }
  }
  return false;
}

absl::Status GroupOptions::validate() const {
  if (timeout_ns <= 0 || timeout_ns > kMaxTimeoutNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.timeout_ns = %d is outside 1..%d ns",
                        timeout_ns, kMaxTimeoutNs));
  }
  if (static_cast<size_t>(algorithm) >= kNames.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.algorithm = %d is not an Algorithm",
                        static_cast<int>(algorithm)));
  }
  if (ring_directions != 1 && ring_directions != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GroupOptions.ring_directions = %u; use 1 or 2", ring_directions));
  }
  if (!std::has_single_bit(max_frame_bytes) ||
      max_frame_bytes < kMinFrameBytes || max_frame_bytes > kMaxFrameBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GroupOptions.max_frame_bytes = %u; use a power of two in %u..%u",
        max_frame_bytes, kMinFrameBytes, kMaxFrameBytes));
  }
  if (depth < kMinDepth || depth > kMaxDepth) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.depth = %u is outside %u..%u", depth,
                        kMinDepth, kMaxDepth));
  }
  if (send_queue_bytes < kMinFrameBytes ||
      send_queue_bytes > kMaxSendQueueBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.send_queue_bytes = %u is outside "
                        "%u..%u; set a byte count in that range (default "
                        "1 MiB, two full frames)",
                        send_queue_bytes, kMinFrameBytes, kMaxSendQueueBytes));
  }
  if (max_slab_bytes == 0) {
    return absl::InvalidArgumentError("GroupOptions.max_slab_bytes is 0");
  }
  return recovery.validate();
}

absl::Status RecoveryOptions::validate() const {
  if (min_rto_ns < kMinRtoNs || min_rto_ns > initial_rto_ns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GroupOptions.recovery.min_rto_ns = %d is outside %d..initial_rto_ns "
        "(%d); set it within that range",
        min_rto_ns, kMinRtoNs, initial_rto_ns));
  }
  if (initial_rto_ns > max_rto_ns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GroupOptions.recovery.initial_rto_ns = %d exceeds max_rto_ns (%d); "
        "lower initial_rto_ns or raise max_rto_ns",
        initial_rto_ns, max_rto_ns));
  }
  if (max_rto_ns > GroupOptions::kMaxTimeoutNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.recovery.max_rto_ns = %d exceeds %d ns; "
                        "lower it",
                        max_rto_ns, GroupOptions::kMaxTimeoutNs));
  }
  if (max_retries == 0 || max_retries > kMaxRetries) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GroupOptions.recovery.max_retries = %u is outside "
                        "1..%u; set a count in that range",
                        max_retries, kMaxRetries));
  }
  return absl::OkStatus();
}

}  // namespace weft
