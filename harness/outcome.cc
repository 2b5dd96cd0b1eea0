#include "harness/outcome.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"

namespace weft::harness {
namespace {

// Longest piece of an untyped error's message quoted in the detail.
constexpr size_t kMaxQuotedChars = 80;

bool is_typed(const absl::Status& status) {
  const std::optional<ErrorPlace> place = error_place(status);
  if (!place || place->rank == kNoPeer || place->cause == ErrorCause::kUnknown)
    return false;
  return place->peer != kNoPeer || place->cause == ErrorCause::kGroupFailed ||
         place->cause == ErrorCause::kRevoked ||
         place->cause == ErrorCause::kExcluded;
}

// Caught first-hand, not relayed by a peer's abort or a refusal.
bool is_first_hand(const absl::Status& status) {
  const std::optional<ErrorPlace> place = error_place(status);
  return status.code() != absl::StatusCode::kAborted &&
         !(place && place->cause == ErrorCause::kGroupFailed);
}

std::string describe_typed(const absl::Status& status) {
  const ErrorPlace place = *error_place(status);
  std::string out(error_cause_name(place.cause));
  absl::StrAppendFormat(&out, ": rank %u", place.rank);
  if (place.peer != kNoPeer)
    absl::StrAppendFormat(&out, ", peer %u", place.peer);
  return out;
}

std::string quote(const absl::Status& status) {
  std::string text(status.message());
  if (text.size() > kMaxQuotedChars) text = text.substr(0, kMaxQuotedChars);
  return absl::StrFormat("%s: %s", absl::StatusCodeToString(status.code()),
                         text);
}

// The error that best explains the run: a first-hand one if any.
const absl::Status* representative(std::span<const RankOutcome> ranks) {
  const absl::Status* any = nullptr;
  for (const RankOutcome& r : ranks) {
    if (r.first_error.ok()) continue;
    if (is_first_hand(r.first_error)) return &r.first_error;
    if (any == nullptr) any = &r.first_error;
  }
  return any;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCorrect:
      return "correct";
    case Verdict::kTypedError:
      return "typed error";
    case Verdict::kHang:
      return "hang";
    case Verdict::kTimeLimit:
      return "time limit";
    case Verdict::kCorrupt:
      return "CORRUPT";
    case Verdict::kUntypedError:
      return "untyped error";
  }
  return "unknown";
}

bool verdict_allowed(Verdict verdict) {
  return verdict == Verdict::kCorrect || verdict == Verdict::kTypedError;
}

bool verdict_inconclusive(Verdict verdict) {
  return verdict == Verdict::kTimeLimit;
}

bool verdict_failed(Verdict verdict) {
  return !verdict_allowed(verdict) && !verdict_inconclusive(verdict);
}

std::string Outcome::summary() const {
  std::string out(verdict_name(verdict));
  if (!detail.empty()) absl::StrAppend(&out, " (", detail, ")");
  return out;
}

Outcome classify(const sim::RunResult& run,
                 std::span<const RankOutcome> ranks) {
  Outcome out;
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const RankOutcome& rank = ranks[r];
    if (!rank.first_error.ok() && is_first_hand(rank.first_error))
      ++out.detections;
    if (rank.first_error.ok() && rank.checked && rank.wrong_elements > 0 &&
        out.verdict != Verdict::kCorrupt) {
      out.verdict = Verdict::kCorrupt;
      out.detail =
          absl::StrFormat("rank %u: %u wrong elements", r, rank.wrong_elements);
    }
  }
  if (out.verdict == Verdict::kCorrupt) return out;
  bool all_finished = true;
  for (const RankOutcome& r : ranks) all_finished &= r.finished;
  if (run.outcome == sim::RunResult::Outcome::kTimeLimit) {
    // The user's budget, not a defect: its own verdict, with no detail.
    out.verdict = Verdict::kTimeLimit;
    return out;
  }
  if (!run.completed() || !all_finished) {
    out.verdict = Verdict::kHang;
    out.detail = std::string(sim::outcome_name(run.outcome));
    return out;
  }
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const absl::Status& e = ranks[r].first_error;
    if (e.ok() || is_typed(e)) continue;
    out.verdict = Verdict::kUntypedError;
    out.detail = absl::StrFormat("rank %u: %s", r, quote(e));
    return out;
  }
  if (const absl::Status* e = representative(ranks)) {
    out.verdict = Verdict::kTypedError;
    out.detail = describe_typed(*e);
    out.place = error_place(*e);
  }
  return out;
}

}  // namespace weft::harness
