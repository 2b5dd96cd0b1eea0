// Refusing a simulated run that cannot fit in memory, before it starts:
// the run's estimate (harness/memory_estimate.h) against the machine's
// physical memory, or against --max_memory. The flag (the FlagSet
// kMemoryFlags) is shared by weft-sim's study, run and sweep and by
// weft-bench's simulated runs: --max_memory=64G takes a byte size,
// --max_memory=off turns the check off.
//
// Physical memory, not the memory free at the moment: it is the same on
// every run of a machine, so whether a command is refused does not depend
// on what else is running; a run over it cannot fit at all.
#ifndef WEFT_TOOLS_CLI_MEMORY_CHECK_H_
#define WEFT_TOOLS_CLI_MEMORY_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/memory_estimate.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::cli {

// --max_memory.
extern const FlagSet kMemoryFlags;

struct MemoryLimit {
  std::optional<uint64_t> bytes;  // none: the check is off
  std::string source;             // "physical memory", "--max_memory"
};

// --max_memory's value: a size (K, M, G suffixes), "off", or "" for the
// machine's physical memory. InvalidArgument naming the flag otherwise.
absl::StatusOr<MemoryLimit> memory_limit();

// "1.50 GiB", "12.0 MiB": a byte count as the refusal line shows it.
std::string memory_size_text(uint64_t bytes);

// Runs whose estimate is printed before they start (announce_memory()):
// worlds of at least kAnnouncedRanks ranks or estimates of at least
// kAnnouncedBytes, where a run takes long enough, or memory enough, that
// the figure helps before the first result does. (Smaller runs stay quiet:
// the default study's 64 MiB row alone estimates 1.74 GiB.)
inline constexpr uint32_t kAnnouncedRanks = 256;
inline constexpr uint64_t kAnnouncedBytes = uint64_t{4} << 30;

// "about 1.23 GiB of memory (buffers ..., frames ..., endpoints ...,
// trace ...)": the estimate and its parts, as the lines below show it.
std::string memory_estimate_text(const harness::MemoryEstimate& estimate);

// Prints "weft-sim: <what> needs about ... of memory (...); the limit is
// ... (<source>)" on stderr when the run is big as above; nothing
// otherwise. Stderr, so the run's own output (and its JSON) stays as is.
void announce_memory(const harness::MemoryEstimate& estimate, uint32_t ranks,
                     const MemoryLimit& limit, const std::string& what);

// ResourceExhausted, one line saying the estimate, its largest parts, the
// limit and the flag that overrides it, when `estimate` exceeds `limit`;
// `what` names the run ("this run", "row all_sum 64 MiB over mesh").
absl::Status check_memory(const harness::MemoryEstimate& estimate,
                          const MemoryLimit& limit, const std::string& what);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_MEMORY_CHECK_H_
