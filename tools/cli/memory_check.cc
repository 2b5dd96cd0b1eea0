#include "tools/cli/memory_check.h"

#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/cli/byte_size.h"

ABSL_FLAG(std::string, max_memory, "",
          "refuse a simulated run whose memory estimate exceeds this size "
          "(K, M, G suffixes); empty: the machine's physical memory; off: "
          "no check");

namespace weft::tools::cli {

const FlagSet kMemoryFlags("memory",
                           "the memory check before a simulated run starts",
                           FLAGS_max_memory);

namespace {

// Largest --max_memory accepted: 1 PiB.
constexpr uint64_t kMaxMemoryFlagBytes = uint64_t{1} << 50;
constexpr double kBytesPerKiB = 1024;

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
}

}  // namespace

absl::StatusOr<MemoryLimit> memory_limit() {
  const std::string text = absl::GetFlag(FLAGS_max_memory);
  if (text == "off") return MemoryLimit{std::nullopt, "--max_memory=off"};
  if (text.empty()) {
    const uint64_t physical = physical_memory_bytes();
    // A system that does not say how much it has is not refused.
    if (physical == 0) return MemoryLimit{std::nullopt, "unknown memory"};
    return MemoryLimit{physical, "physical memory"};
  }
  absl::StatusOr<uint64_t> bytes =
      parse_byte_size("max_memory", text, kMaxMemoryFlagBytes);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(bytes.status().message(), ", or off"));
  }
  return MemoryLimit{*bytes, "--max_memory"};
}

std::string memory_size_text(uint64_t bytes) {
  constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= kBytesPerKiB && unit + 1 < std::size(kUnits)) {
    value /= kBytesPerKiB;
    ++unit;
  }
  if (unit == 0) return absl::StrFormat("%u bytes", bytes);
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

std::string memory_estimate_text(const harness::MemoryEstimate& estimate) {
  return absl::StrFormat(
      "about %s of memory (buffers %s, frames %s, endpoints %s, plans %s, "
      "scratch %s, trace %s)",
      memory_size_text(estimate.total_bytes()),
      memory_size_text(estimate.buffer_bytes),
      memory_size_text(estimate.slab_bytes),
      memory_size_text(estimate.endpoint_bytes),
      memory_size_text(estimate.plan_bytes),
      memory_size_text(estimate.scratch_bytes),
      memory_size_text(estimate.trace_bytes));
}

void announce_memory(const harness::MemoryEstimate& estimate, uint32_t ranks,
                     const MemoryLimit& limit, const std::string& what) {
  if (ranks < kAnnouncedRanks && estimate.total_bytes() < kAnnouncedBytes)
    return;
  const std::string limit_text =
      limit.bytes
          ? absl::StrFormat("the limit is %s (%s)",
                            memory_size_text(*limit.bytes), limit.source)
          : absl::StrFormat("no limit (%s)", limit.source);
  std::fprintf(stderr, "weft-sim: %s needs %s; %s\n", what.c_str(),
               memory_estimate_text(estimate).c_str(), limit_text.c_str());
  std::fflush(stderr);
}

absl::Status check_memory(const harness::MemoryEstimate& estimate,
                          const MemoryLimit& limit, const std::string& what) {
  if (!limit.bytes || estimate.total_bytes() <= *limit.bytes)
    return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s needs %s but %s is %s; use fewer ranks or bytes, or pass "
      "--max_memory=SIZE (or off) to run it anyway",
      what, memory_estimate_text(estimate), limit.source,
      memory_size_text(*limit.bytes)));
}

}  // namespace weft::tools::cli
