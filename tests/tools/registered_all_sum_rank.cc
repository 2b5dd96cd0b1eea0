// registered_all_sum_rank: one rank of a weft group on the verbs fabric, for
// `weft-sim launch` to run as one process per rank on the simulation
// server (weft's simulated provider as the verbs library). It joins through
// weft::ProcessGroup::from_environment(), registers its buffers with
// Group::register_memory, and runs all-sums from them: kCalls out of place
// (input and output registered), then kCalls in place (one registered
// buffer), each of kElements int64 values that depend on the rank, the
// element and the call. Every element is checked against the sum over all
// ranks computed here, in a loop that calls nothing of weft.
//
// Prints "rank R: ..." lines, the last one with the group's
// payload_bytes_zero_copy and payload_bytes_staged and the registration
// cache's misses and evictions. Exit codes: 0 every element was right and
// payloads were sent from registered memory; 1 a wrong element, or nothing
// was sent zero-copy; 3 an operation or a registration failed; 4 the group
// did not start.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_counters.h"
#include "collectives/registered_memory.h"
#include "startup/process_group.h"
#include "verbs/verbs_fabric.h"

namespace {

enum Exit { kOk = 0, kWrong = 1, kError = 3, kNoGroup = 4 };

// Several windows of frames per peer, and not a multiple of the rank
// count, so chunks have uneven ends.
constexpr size_t kElements = 100'003;
constexpr uint32_t kCalls = 3;

// What rank `rank` contributes at element `i` of call `call`.
int64_t value(uint32_t rank, size_t i, uint32_t call) {
  return static_cast<int64_t>(rank + 1) * static_cast<int64_t>(i % 9973 + 1) +
         static_cast<int64_t>(call) * 1'000'003 - static_cast<int64_t>(rank);
}

void fill(std::span<int64_t> buffer, uint32_t rank, uint32_t call) {
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = value(rank, i, call);
}

// The first element of `got` that is not the sum over `ranks` ranks; -1
// when all are right.
int64_t first_wrong(std::span<const int64_t> got, uint32_t ranks,
                    uint32_t call) {
  for (size_t i = 0; i < got.size(); ++i) {
    int64_t want = 0;
    for (uint32_t r = 0; r < ranks; ++r) want += value(r, i, call);
    if (got[i] != want) return static_cast<int64_t>(i);
  }
  return -1;
}

int report_error(uint32_t rank, const char* what, const absl::Status& s) {
  std::printf("rank %u: %s failed: %s\n", rank, what, s.ToString().c_str());
  return kError;
}

int run() {
  absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
      weft::ProcessGroup::from_environment();
  if (!pg.ok()) {
    std::printf("registered_all_sum_rank: no group: %s\n",
                pg.status().ToString().c_str());
    return kNoGroup;
  }
  weft::Group& group = (*pg)->group();
  const uint32_t rank = group.rank();
  std::vector<int64_t> in(kElements);
  std::vector<int64_t> out(kElements);
  absl::StatusOr<weft::RegisteredMemory> in_reg =
      group.register_memory(std::span(in));
  if (!in_reg.ok())
    return report_error(rank, "registering input", in_reg.status());
  absl::StatusOr<weft::RegisteredMemory> out_reg =
      group.register_memory(std::span(out));
  if (!out_reg.ok())
    return report_error(rank, "registering output", out_reg.status());
  for (uint32_t call = 0; call < 2 * kCalls; ++call) {
    const bool in_place = call >= kCalls;
    std::span<int64_t> target = in_place ? std::span(in) : std::span(out);
    fill(in, rank, call);
    if (!in_place) std::fill(out.begin(), out.end(), -1);
    const absl::Status s =
        group.all_sum(std::as_bytes(std::span(in)),
                      std::as_writable_bytes(target), weft::DType::kInt64);
    if (!s.ok()) return report_error(rank, "all_sum", s);
    const int64_t wrong = first_wrong(target, group.size(), call);
    if (wrong >= 0) {
      std::printf("rank %u: call %u (%s): element %" PRId64 " is %" PRId64
                  ", not the sum of the ranks' values\n",
                  rank, call, in_place ? "in place" : "out of place", wrong,
                  target[static_cast<size_t>(wrong)]);
      return kWrong;
    }
  }
  const weft::GroupCounters counters = group.counters();
  weft::verbs::RegistrationCounters cache;
  if (const auto* verbs =
          dynamic_cast<const weft::verbs::VerbsFabric*>(&(*pg)->fabric())) {
    for (const std::string& device : verbs->device_names()) {
      const weft::verbs::RegistrationCounters c =
          verbs->registration_counters(device);
      cache.misses += c.misses;
      cache.evictions += c.evictions;
    }
  }
  std::printf(
      "rank %u: %u all_sums of %zu int64 correct; zero-copy payload "
      "bytes %" PRIu64 ", staged %" PRIu64 ", registration misses %" PRIu64
      ", evictions %" PRIu64 "\n",
      rank, 2 * kCalls, kElements, counters.payload_bytes_zero_copy,
      counters.payload_bytes_staged, cache.misses, cache.evictions);
  return counters.payload_bytes_zero_copy > 0 ? kOk : kWrong;
}

}  // namespace

int main() { return run(); }
