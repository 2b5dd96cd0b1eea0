#include "sim/faults.h"

#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/absl_compat.h"
#include "base/text_file.h"

namespace weft::sim {
namespace {

// The longest virtual time a plan may name: one day.
constexpr TimeNs kMaxPlanTimeNs = 86'400 * kNsPerS;

// Shortest text that reads back as exactly `value`.
std::string format_double(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

// The key=value tokens of one plan line, consumed by the parser; whatever is
// left over at the end is an unknown key.
class Fields {
 public:
  Fields(size_t line, absl::string_view kind) : line_(line), kind_(kind) {}

  absl::Status add(absl::string_view token) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(token, absl::MaxSplits('=', 1));
    if (kv.first.empty() || token.find('=') == absl::string_view::npos) {
      return error(absl::StrCat("\"", token, "\" is not key=value"));
    }
    for (const auto& [key, value] : fields_) {
      if (key == kv.first) return error(absl::StrCat(kv.first, " given twice"));
    }
    fields_.push_back(kv);
    return absl::OkStatus();
  }

  // Takes `key` out; false when it is absent.
  bool take(absl::string_view key, absl::string_view* value) {
    for (size_t i = 0; i < fields_.size(); ++i) {
      if (fields_[i].first == key) {
        *value = fields_[i].second;
        fields_.erase(fields_.begin() + static_cast<ptrdiff_t>(i));
        return true;
      }
    }
    return false;
  }

  absl::Status required(absl::string_view key, absl::string_view* value) {
    if (take(key, value)) return absl::OkStatus();
    return error(absl::StrCat("missing ", key, "="));
  }

  absl::Status rank(absl::string_view key, uint32_t* out) {
    absl::string_view v;
    if (absl::Status s = required(key, &v); !s.ok()) return s;
    if (!absl::SimpleAtoi(v, out)) {
      return error(absl::StrCat(key, "=", v, " is not a rank number"));
    }
    return absl::OkStatus();
  }

  // `key`=A,B: two rank numbers.
  absl::Status rank_pair(absl::string_view key, uint32_t* a, uint32_t* b) {
    absl::string_view v;
    if (absl::Status s = required(key, &v); !s.ok()) return s;
    std::pair<absl::string_view, absl::string_view> ab =
        absl::StrSplit(v, absl::MaxSplits(',', 1));
    if (v.find(',') == absl::string_view::npos ||
        !absl::SimpleAtoi(ab.first, a) || !absl::SimpleAtoi(ab.second, b)) {
      return error(absl::StrCat(key, "=", v, " is not two rank numbers A,B"));
    }
    return absl::OkStatus();
  }

  // An optional cable index; kAllCables when absent.
  absl::Status cable(uint32_t* out) {
    absl::string_view v;
    *out = kAllCables;
    if (!take("cable", &v)) return absl::OkStatus();
    if (!absl::SimpleAtoi(v, out) || *out >= Topology::kMaxCables) {
      return error(absl::StrFormat(
          "cable=%s is not a cable index in 0..%u (0 is a pair's first cable)",
          v, Topology::kMaxCables - 1));
    }
    return absl::OkStatus();
  }

  bool has(absl::string_view key) const {
    for (const auto& kv : fields_) {
      if (kv.first == key) return true;
    }
    return false;
  }

  absl::Status frame(uint64_t* out) {
    absl::string_view v;
    if (absl::Status s = required("frame", &v); !s.ok()) return s;
    if (!absl::SimpleAtoi(v, out) || *out == 0) {
      return error(
          absl::StrCat("frame=", v, " is not a frame number (counted from 1)"));
    }
    return absl::OkStatus();
  }

  absl::Status time(absl::string_view key, TimeNs* out) {
    absl::string_view v;
    if (absl::Status s = required(key, &v); !s.ok()) return s;
    if (!absl::SimpleAtoi(v, out) || *out < 0 || *out > kMaxPlanTimeNs) {
      return error(
          absl::StrFormat("%s=%s is not a whole number of "
                          "nanoseconds in 0..%d",
                          key, v, kMaxPlanTimeNs));
    }
    return absl::OkStatus();
  }

  absl::Status finish() {
    if (fields_.empty()) return absl::OkStatus();
    return error(
        absl::StrCat("unknown key ", fields_.front().first, "= for ", kind_));
  }

  absl::Status error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("fault plan line %u: %s", line_, what));
  }

 private:
  size_t line_;
  absl::string_view kind_;
  std::vector<std::pair<absl::string_view, absl::string_view>> fields_;
};

absl::Status parse_rates(Fields& f, FaultRates* rates) {
  const std::pair<absl::string_view, double*> keys[] = {
      {"loss", &rates->loss},
      {"duplicate", &rates->duplicate},
      {"reorder", &rates->reorder},
      {"error", &rates->error_completion}};
  for (const auto& [key, out] : keys) {
    absl::string_view v;
    if (!f.take(key, &v)) continue;
    absl::StatusOr<double> rate =
        FaultRates::parse_rate(base::to_std(key), base::to_std(v));
    if (!rate.ok()) return f.error(rate.status().message());
    *out = *rate;
  }
  if (absl::string_view v; f.take("until_ns", &v)) {
    if (!absl::SimpleAtoi(v, &rates->until_ns) || rates->until_ns < 0 ||
        rates->until_ns > kMaxPlanTimeNs) {
      return f.error(absl::StrFormat(
          "until_ns=%s is not a whole number of nanoseconds in 0..%d", v,
          kMaxPlanTimeNs));
    }
  }
  return f.finish();
}

absl::Status parse_error_fields(Fields& f, ScriptedFault* fault) {
  absl::string_view v;
  if (absl::Status s = f.required("status", &v); !s.ok()) return s;
  if (!parse_wc_status(base::to_std(v), &fault->status) ||
      fault->status == WcStatus::kSuccess) {
    return f.error(absl::StrCat("status=", v,
                                " is not a verbs error status (e.g. "
                                "IBV_WC_REM_OP_ERR)"));
  }
  fault->side = FaultSide::kRecv;
  if (f.take("side", &v)) {
    if (v == "send") {
      fault->side = FaultSide::kSend;
    } else if (v != "recv") {
      return f.error(absl::StrCat("side=", v, " is neither send nor recv"));
    }
  }
  return absl::OkStatus();
}

// link_down's ends (from= and to=, or between=), cable= and at_ns=.
absl::Status parse_link_down(Fields& f, ScriptedFault* fault) {
  absl::Status s;
  if (f.has("between")) {
    if (f.has("from") || f.has("to")) {
      return f.error("link_down takes from= and to=, or between=, not both");
    }
    fault->both_ways = true;
    s.Update(f.rank_pair("between", &fault->rank, &fault->peer));
  } else {
    s.Update(f.rank("from", &fault->rank));
    s.Update(f.rank("to", &fault->peer));
  }
  s.Update(f.cable(&fault->cable));
  s.Update(f.time("at_ns", &fault->at_ns));
  return s;
}

// Everything after the kind keyword of a scripted fault.
absl::Status parse_fault(Fields& f, ScriptedFault* fault) {
  absl::Status s;
  switch (fault->kind) {
    case FaultKind::kDrop:
    case FaultKind::kDuplicate:
    case FaultKind::kDelay:
    case FaultKind::kError:
      s.Update(f.rank("from", &fault->rank));
      s.Update(f.rank("to", &fault->peer));
      s.Update(f.frame(&fault->frame));
      if (fault->kind == FaultKind::kDelay)
        s.Update(f.time("by_ns", &fault->duration_ns));
      if (fault->kind == FaultKind::kError)
        s.Update(parse_error_fields(f, fault));
      break;
    case FaultKind::kQpError:
      s.Update(f.rank("rank", &fault->rank));
      s.Update(f.rank("peer", &fault->peer));
      s.Update(f.time("at_ns", &fault->at_ns));
      break;
    case FaultKind::kCrash:
      s.Update(f.rank("rank", &fault->rank));
      s.Update(f.time("at_ns", &fault->at_ns));
      break;
    case FaultKind::kLinkDown:
      s.Update(parse_link_down(f, fault));
      break;
    case FaultKind::kStall:
      s.Update(f.rank("rank", &fault->rank));
      s.Update(f.time("at_ns", &fault->at_ns));
      s.Update(f.time("for_ns", &fault->duration_ns));
      break;
    case FaultKind::kNone:
      break;
  }
  if (!s.ok()) return s;
  return f.finish();
}

bool fault_kind_from_name(absl::string_view name, FaultKind* out) {
  for (int k = 1; k < kFaultKindCount; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    if (base::to_absl(fault_kind_name(kind)) == name) {
      *out = kind;
      return true;
    }
  }
  return false;
}

// "1 and 7", "1, 2 and 7" or "no rank": whom `rank` is cabled to.
std::string cabled_peers_text(const Topology& topology, uint32_t rank) {
  constexpr size_t kListed = 8;  // then "..."
  std::vector<std::string> peers;
  size_t count = 0;
  for (uint32_t p = 0; p < topology.ranks(); ++p) {
    if (p == rank || !topology.connected(rank, p)) continue;
    if (++count <= kListed) peers.push_back(absl::StrCat(p));
  }
  if (peers.empty()) return "no rank";
  if (count > kListed) return absl::StrCat(absl::StrJoin(peers, ", "), ", ...");
  if (peers.size() == 1) return peers[0];
  const std::string last = peers.back();
  peers.pop_back();
  return absl::StrCat(absl::StrJoin(peers, ", "), " and ", last);
}

absl::Status parse_line(size_t number, absl::string_view line, bool* saw_rates,
                        FaultPlan* plan) {
  std::vector<absl::string_view> tokens =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (tokens.empty()) return absl::OkStatus();
  Fields fields(number, tokens[0]);
  for (size_t i = 1; i < tokens.size(); ++i) {
    if (absl::Status s = fields.add(tokens[i]); !s.ok()) return s;
  }
  if (tokens[0] == "rates") {
    if (*saw_rates) return fields.error("rates given twice");
    *saw_rates = true;
    return parse_rates(fields, &plan->rates);
  }
  ScriptedFault fault;
  if (!fault_kind_from_name(tokens[0], &fault.kind)) {
    return fields.error(absl::StrCat(
        "unknown fault \"", tokens[0],
        "\" (expected rates, drop, duplicate, delay, error, qp_error, crash, "
        "link_down or stall)"));
  }
  if (absl::Status s = parse_fault(fields, &fault); !s.ok()) return s;
  fault.line = number;
  plan->script.push_back(fault);
  return absl::OkStatus();
}

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNone:
      return "none";
    case FaultKind::kDrop:
      return "drop";
    case FaultKind::kDuplicate:
      return "duplicate";
    case FaultKind::kDelay:
      return "delay";
    case FaultKind::kError:
      return "error";
    case FaultKind::kQpError:
      return "qp_error";
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kLinkDown:
      return "link_down";
    case FaultKind::kStall:
      return "stall";
  }
  return "none";
}

bool FaultRates::any() const {
  return loss > 0 || duplicate > 0 || reorder > 0 || error_completion > 0;
}

absl::StatusOr<double> FaultRates::parse_rate(std::string_view name,
                                              std::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(base::to_absl(text), &value) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s rate \"%s\" is not a number (a probability from 0 to 1)", name,
        text));
  }
  if (value < 0 || value > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s rate %s is outside 0..1 (a per-frame probability)", name, text));
  }
  return value;
}

absl::Status FaultRates::validate() const {
  const std::pair<const char*, double> rates[] = {{"loss", loss},
                                                  {"duplicate", duplicate},
                                                  {"reorder", reorder},
                                                  {"error", error_completion}};
  for (const auto& [name, value] : rates) {
    if (!(value >= 0 && value <= 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s rate %g is outside 0..1 (a per-frame probability)", name, value));
    }
  }
  return absl::OkStatus();
}

bool ScriptedFault::is_frame_fault() const {
  return kind == FaultKind::kDrop || kind == FaultKind::kDuplicate ||
         kind == FaultKind::kDelay || kind == FaultKind::kError;
}

bool ScriptedFault::names_a_pair() const {
  return kind != FaultKind::kCrash && kind != FaultKind::kStall;
}

bool ScriptedFault::takes_link(uint32_t from, uint32_t to,
                               uint32_t link_cable) const {
  if (kind != FaultKind::kLinkDown) return false;
  if (cable != kAllCables && cable != link_cable) return false;
  return (rank == from && peer == to) ||
         (both_ways && rank == to && peer == from);
}

bool operator==(const ScriptedFault& a, const ScriptedFault& b) {
  return a.kind == b.kind && a.rank == b.rank && a.peer == b.peer &&
         a.frame == b.frame && a.at_ns == b.at_ns && a.cable == b.cable &&
         a.both_ways == b.both_ways && a.duration_ns == b.duration_ns &&
         a.status == b.status && a.side == b.side;
}

std::string ScriptedFault::where(size_t index) const {
  return line != 0
             ? absl::StrFormat("fault plan line %u (\"%s\")", line, to_text())
             : absl::StrFormat("fault plan entry %u (\"%s\")", index + 1,
                               to_text());
}

bool ScriptedFault::is_timed_fault() const {
  return kind == FaultKind::kQpError || kind == FaultKind::kCrash ||
         kind == FaultKind::kLinkDown || kind == FaultKind::kStall;
}

std::string ScriptedFault::to_text() const {
  const std::string_view name = fault_kind_name(kind);
  switch (kind) {
    case FaultKind::kDrop:
    case FaultKind::kDuplicate:
      return absl::StrFormat("%s from=%u to=%u frame=%u", name, rank, peer,
                             frame);
    case FaultKind::kDelay:
      return absl::StrFormat("delay from=%u to=%u frame=%u by_ns=%d", rank,
                             peer, frame, duration_ns);
    case FaultKind::kError:
      return absl::StrFormat("error from=%u to=%u frame=%u status=%s side=%s",
                             rank, peer, frame, wc_status_symbol(status),
                             side == FaultSide::kSend ? "send" : "recv");
    case FaultKind::kQpError:
      return absl::StrFormat("qp_error rank=%u peer=%u at_ns=%d", rank, peer,
                             at_ns);
    case FaultKind::kCrash:
      return absl::StrFormat("crash rank=%u at_ns=%d", rank, at_ns);
    case FaultKind::kLinkDown: {
      // A link_down of every cable, one way, reads as it always did.
      std::string out =
          both_ways ? absl::StrFormat("link_down between=%u,%u", rank, peer)
                    : absl::StrFormat("link_down from=%u to=%u", rank, peer);
      if (cable != kAllCables) absl::StrAppend(&out, " cable=", cable);
      absl::StrAppend(&out, " at_ns=", at_ns);
      return out;
    }
    case FaultKind::kStall:
      return absl::StrFormat("stall rank=%u at_ns=%d for_ns=%d", rank, at_ns,
                             duration_ns);
    case FaultKind::kNone:
      break;
  }
  return "# none";
}

absl::StatusOr<FaultPlan> FaultPlan::parse(std::string_view text) {
  FaultPlan plan;
  bool saw_rates = false;
  size_t number = 0;
  for (absl::string_view line : absl::StrSplit(base::to_absl(text), '\n')) {
    if (++number > kMaxLines) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "fault plan has more than %u lines; split or shrink it", kMaxLines));
    }
    line = line.substr(0, line.find('#'));
    if (absl::Status s = parse_line(number, line, &saw_rates, &plan); !s.ok()) {
      return s;
    }
  }
  return plan;
}

absl::StatusOr<FaultPlan> FaultPlan::load_file(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::read_text_file(path, kMaxFileBytes, "fault plan");
  if (!text.ok()) return text.status();
  absl::StatusOr<FaultPlan> plan = parse(*text);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat(path, ": ", plan.status().message()));
  }
  return plan;
}

std::string FaultPlan::to_text() const {
  std::string out;
  // Written whenever it differs from no rates at all, so a stop time given
  // without a rate (meaningless, but accepted) still reads back the same.
  if (rates != FaultRates{}) {
    absl::StrAppend(&out, "rates loss=", format_double(rates.loss),
                    " duplicate=", format_double(rates.duplicate),
                    " reorder=", format_double(rates.reorder),
                    " error=", format_double(rates.error_completion));
    if (rates.until_ns != kNeverNs) {
      absl::StrAppend(&out, " until_ns=", rates.until_ns);
    }
    absl::StrAppend(&out, "\n");
  }
  for (const ScriptedFault& fault : script)
    absl::StrAppend(&out, fault.to_text(), "\n");
  return out;
}

absl::Status FaultPlan::check_world(const Topology& topology) const {
  const uint32_t ranks = topology.ranks();
  for (size_t i = 0; i < script.size(); ++i) {
    const ScriptedFault& f = script[i];
    const bool pair = f.names_a_pair();
    if (f.rank >= ranks || (pair && f.peer >= ranks)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s names a rank outside this world's 0..%u", f.where(i),
          ranks - 1));
    }
    if (pair && f.peer == f.rank) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s pairs rank %u with itself; name two ranks", f.where(i), f.rank));
    }
    if (pair && !topology.connected(f.rank, f.peer)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s names ranks %u and %u, which no cable joins in this world; "
          "name a cabled pair (rank %u is cabled to %s)",
          f.where(i), f.rank, f.peer, f.rank,
          cabled_peers_text(topology, f.rank)));
    }
    const size_t cables = pair ? topology.devices(f.rank, f.peer).size() : 0;
    if (f.kind == FaultKind::kLinkDown && f.cable != kAllCables &&
        f.cable >= cables) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s names cable %u, but ranks %u and %u have %u cable%s in this "
          "world; name a cable in 0..%u, or leave cable= out for all",
          f.where(i), f.cable, f.rank, f.peer, cables, cables == 1 ? "" : "s",
          cables - 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace weft::sim
