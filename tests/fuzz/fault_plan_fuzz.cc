// Fuzzes the simulator's fault plan text (sim/faults.h): any text must give
// a plan or an InvalidArgument naming the line, and a parsed plan must
// round-trip: parse(to_text()) gives back an equal plan whose text is the
// same, so a failing run's faults replay exactly.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "sim/faults.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft::sim {
namespace {

// A world for check_world(): small enough that fuzzed ranks land on both
// sides of it, and a ring of two cables, so some pairs are cabled and some
// not, and some cable indexes are there and some not.
constexpr uint32_t kRanks = 4;
constexpr uint32_t kCables = 2;

void check_fault(const ScriptedFault& f) {
  WEFT_FUZZ_CHECK(f.kind != FaultKind::kNone);
  WEFT_FUZZ_CHECK(f.is_frame_fault() != f.is_timed_fault());
  if (f.is_frame_fault()) WEFT_FUZZ_CHECK(f.frame >= 1);
  WEFT_FUZZ_CHECK(f.at_ns >= 0 && f.duration_ns >= 0);
  if (f.kind == FaultKind::kError) {
    WEFT_FUZZ_CHECK(f.status != WcStatus::kSuccess);
  }
  // Only a link_down names a cable or both directions; a cable it names is
  // one a pair could have.
  if (f.kind != FaultKind::kLinkDown) {
    WEFT_FUZZ_CHECK(f.cable == kAllCables && !f.both_ways);
  } else {
    WEFT_FUZZ_CHECK(f.cable == kAllCables || f.cable < Topology::kMaxCables);
  }
}

}  // namespace
}  // namespace weft::sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<FaultPlan> plan = FaultPlan::parse(text);
  if (!plan.ok()) {
    weft::fuzz::check_error(plan.status(), absl::StatusCode::kInvalidArgument,
                            "fault plan");
    return 0;
  }
  WEFT_FUZZ_CHECK(plan->rates.validate().ok());
  for (const ScriptedFault& f : plan->script) check_fault(f);
  const weft::Topology ring = *weft::Topology::ring(kRanks, kCables);
  const absl::Status world = plan->check_world(ring);
  WEFT_FUZZ_CHECK(world.ok() ||
                  world.code() == absl::StatusCode::kInvalidArgument);
  // The model of check_world: a plan it accepts names ranks of the world,
  // cabled pairs and cables those pairs have.
  if (world.ok()) {
    for (const ScriptedFault& f : plan->script) {
      WEFT_FUZZ_CHECK(f.rank < kRanks);
      if (!f.names_a_pair()) continue;
      WEFT_FUZZ_CHECK(f.peer < kRanks && ring.connected(f.rank, f.peer));
      WEFT_FUZZ_CHECK(f.cable == kAllCables || f.cable < kCables);
    }
  }

  const std::string once = plan->to_text();
  absl::StatusOr<FaultPlan> back = FaultPlan::parse(once);
  WEFT_FUZZ_CHECK(back.ok());
  WEFT_FUZZ_CHECK(*back == *plan);
  WEFT_FUZZ_CHECK(back->to_text() == once);
  return 0;
}
