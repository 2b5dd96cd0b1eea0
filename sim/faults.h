// Faults the simulator injects, both as per-frame rates on every link and as
// a script of exact events ("drop the 3rd frame from rank 1 to rank 2",
// "crash rank 3 at 40 us"). A FaultPlan has a replayable text form, one
// fault per line; every fault a rate injects is reported back as the
// equivalent scripted line (World::injected_faults()), so a failing run's
// random faults can be replayed, and shrunk, as a script.
//
//   # comment
//   rates loss=0.01 duplicate=0.001 reorder=0.001 error=0.0005
//   rates loss=0.01 until_ns=300000      rates stop at 300 us (liveness)
//   drop from=1 to=2 frame=3            the 3rd frame (1-based) rank 1 sends
//                                       to rank 2, over any cable
//   duplicate from=1 to=2 frame=5
//   delay from=0 to=1 frame=2 by_ns=5000
//   error from=1 to=2 frame=4 status=IBV_WC_REM_OP_ERR side=recv
//   qp_error rank=1 peer=2 at_ns=40000  rank 1's queue pairs to 2 fail
//   crash rank=3 at_ns=40000
//   link_down from=0 to=1 at_ns=1000    one direction; all its cables
//   link_down from=0 to=1 cable=1 at_ns=1000   one direction, cable 1 only
//   link_down between=0,1 at_ns=1000    both directions, all cables
//   link_down between=0,1 cable=0 at_ns=1000   both directions, cable 0
//   stall rank=2 at_ns=1000 for_ns=50000
#ifndef WEFT_SIM_FAULTS_H_
#define WEFT_SIM_FAULTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "fabric/wc_status.h"

namespace weft::sim {

enum class FaultKind : uint8_t {
  kNone = 0,
  kDrop,       // a frame lost on the wire (its send still succeeds: UC)
  kDuplicate,  // a frame delivered twice
  kDelay,      // a frame held back by duration_ns (reordering)
  kError,      // an error completion on the sending or receiving side
  kQpError,    // all of a rank's queue pairs to a peer forced into error
  kCrash,      // a rank dies: never stepped again, its NIC goes silent
  kLinkDown,   // one or both directions of one or every cable of a pair die
  kStall,      // a rank is not stepped for a while (its NIC still works)
};
inline constexpr int kFaultKindCount = 9;

// The plan's keyword: "drop", "qp_error", ... ("none" for kNone).
std::string_view fault_kind_name(FaultKind kind);

enum class FaultSide : uint8_t { kSend, kRecv };

// Per frame, per link direction. Each is a probability in [0, 1].
struct FaultRates {
  double loss = 0;
  double duplicate = 0;
  double reorder = 0;
  double error_completion = 0;
  // Frames leaving at or after this virtual time draw no rate fault: the
  // faults stop, so a run can be checked for liveness (it must still end).
  // kNeverNs: the rates never stop.
  TimeNs until_ns = kNeverNs;

  bool any() const;
  // InvalidArgument naming the first rate outside [0, 1].
  absl::Status validate() const;
  // A rate given as text (a flag or plan value): a finite number in [0, 1],
  // else InvalidArgument naming `name` and what is wrong.
  static absl::StatusOr<double> parse_rate(std::string_view name,
                                           std::string_view text);

  friend bool operator==(const FaultRates&, const FaultRates&) = default;
};

// ScriptedFault::cable of a link_down that takes every cable of the pair.
inline constexpr uint32_t kAllCables = 0xffffffff;

struct ScriptedFault {
  FaultKind kind = FaultKind::kNone;
  // The sending rank (drop, duplicate, delay, error, link_down) or the rank
  // the fault happens to (qp_error, crash, stall).
  uint32_t rank = 0;
  // The receiving rank, or qp_error's peer; unused by crash and stall.
  uint32_t peer = 0;
  // Frame faults: which frame from `rank` to `peer`, counted from 1 in the
  // order they leave the sender, over all cables.
  uint64_t frame = 0;
  // Timed faults (qp_error, crash, link_down, stall): virtual time.
  TimeNs at_ns = 0;
  // delay: by how much; stall: for how long.
  TimeNs duration_ns = 0;
  // link_down only: the cable (an index into topology.devices(rank, peer)),
  // or kAllCables; and whether peer->rank dies too (`between=`).
  uint32_t cable = kAllCables;
  bool both_ways = false;
  // error only.
  WcStatus status = WcStatus::kSuccess;
  FaultSide side = FaultSide::kRecv;
  // The plan line it was read from (FaultPlan::parse), for messages; 0 for
  // a fault made in code. Not part of what the fault is (operator==).
  size_t line = 0;

  bool is_frame_fault() const;
  bool is_timed_fault() const;
  // Whether it names a pair of ranks (`rank` and `peer`): every kind but
  // crash and stall.
  bool names_a_pair() const;
  // Whether this link_down takes the direction from -> to of `cable`
  // (always false for other kinds; time is not looked at).
  bool takes_link(uint32_t from, uint32_t to, uint32_t cable) const;
  // The plan line, e.g. "drop from=1 to=2 frame=3".
  std::string to_text() const;
  // Where it came from, for messages: "fault plan line 3
  // (\"drop from=1 to=2 frame=3\")", or "fault plan entry 2 (...)" for
  // the index-th fault (0-based) of a plan made in code.
  std::string where(size_t index) const;

  friend bool operator==(const ScriptedFault& a, const ScriptedFault& b);
};

struct FaultPlan {
  // Longest plan parse() accepts.
  static constexpr size_t kMaxLines = 1'000'000;

  FaultRates rates;
  std::vector<ScriptedFault> script;

  bool empty() const { return !rates.any() && script.empty(); }

  // Parses the text form above. InvalidArgument says which line and what is
  // wrong (unknown fault, missing or unknown key, bad number, rate outside
  // [0, 1], a status that is no verbs status).
  static absl::StatusOr<FaultPlan> parse(std::string_view text);
  // parse() of a file of at most kMaxFileBytes.
  static constexpr size_t kMaxFileBytes = size_t{64} << 20;
  static absl::StatusOr<FaultPlan> load_file(const std::string& path);
  // The text form; parse(to_text()) gives back an equal plan.
  std::string to_text() const;

  // InvalidArgument, naming the fault's line (or entry) and what to do,
  // when a scripted fault names a rank outside the topology's, a rank
  // paired with itself, or a pair of ranks no cable joins (a link_down or
  // a frame fault there would never happen, yet count as injected), or a
  // link_down's cable=K the pair does not have.
  absl::Status check_world(const Topology& topology) const;

  friend bool operator==(const FaultPlan&, const FaultPlan&) = default;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_FAULTS_H_
