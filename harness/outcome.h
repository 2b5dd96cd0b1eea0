// The verdict on one run of a collective over every rank, as the tools
// report it. Allowed outcomes are the two the fault semantics promise
// (collectives/group.h): the bit-exact result, or a typed error that names
// where it happened. Everything else fails the run.
//
//   correct        every rank ended OK with the reference bytes
//   typed error    some rank ended with an error carrying an ErrorPlace
//                  with rank, cause and peer (a refusal because the group
//                  had already failed, kGroupFailed, and the revoking
//                  rank's own revocation, kRevoked, need no peer); the
//                  others ended OK and correct
//   hang           the simulator stopped the run (no event left, livelock)
//                  before every rank's operations ended
//   time limit     the run's virtual-time limit (--time_limit_ms) passed
//                  before every rank's operations ended: the user's budget
//                  ran out, which is neither an allowed outcome nor a defect
//                  found (a longer limit may end either way)
//   CORRUPT        a rank ended OK with bytes that differ from the reference
//   untyped error  an error without rank, peer or cause
//
// Only each rank's first error counts: once a group fails, its later calls
// are refused by design.
#ifndef WEFT_HARNESS_OUTCOME_H_
#define WEFT_HARNESS_OUTCOME_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fabric/errors.h"
#include "sim/world.h"

namespace weft::harness {

enum class Verdict : uint8_t {
  kCorrect,
  kTypedError,
  kHang,
  kTimeLimit,
  kCorrupt,
  kUntypedError,
};
inline constexpr int kVerdictCount = 6;
// "correct", "typed error", "hang", "time limit", "CORRUPT", "untyped error".
std::string_view verdict_name(Verdict verdict);
// Correct or typed error: what the fault semantics promise.
bool verdict_allowed(Verdict verdict);
// Not allowed and not a defect either: only the time limit, which says the
// run needed more virtual time than it was given.
bool verdict_inconclusive(Verdict verdict);
// Not allowed and not inconclusive: the run found a problem.
bool verdict_failed(Verdict verdict);

// What one rank ended with.
struct RankOutcome {
  bool finished = false;     // every operation of the rank ended
  absl::Status first_error;  // OK when every operation succeeded
  bool checked = false;      // its output was compared with the reference
  uint64_t wrong_elements = 0;
  // Its group failed by the end of the run: a rank whose own operations
  // ended OK was told (by a peer's abort) of a failure elsewhere.
  bool told_of_failure = false;
};

struct Outcome {
  Verdict verdict = Verdict::kCorrect;
  // Ranks that caught a fault themselves (the others learnt of it from a
  // peer's abort, or were refused because the group had failed).
  uint32_t detections = 0;
  // One line of detail: the cause and place of the error, the hang's
  // reason, or the first corrupt rank.
  std::string detail;
  // A typed error's place (cause, rank, peer), as the detail names it.
  std::optional<ErrorPlace> place;

  // "correct", "typed error (sequence: rank 3, peer 2)", "hang (livelock)",
  // "time limit", "CORRUPT (rank 2: 17 wrong elements)", ...
  std::string summary() const;
  bool allowed() const { return verdict_allowed(verdict); }
};

Outcome classify(const sim::RunResult& run, std::span<const RankOutcome> ranks);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_OUTCOME_H_
