// Liveness: what a lane knows of whether its peer is alive (lane.h:
// Liveness, Abort): when it was last heard from, when to probe it, whom it
// believes silent, and where the failure began if it aborted the group.
// Times are passed in: the Lane reads its clock once per event.
//
// Invariants (checked by check_invariants()):
//  - The probe back-off is 1, 2 or 4 (a power of two up to
//    kMaxProbeBackoff): unanswered probes space out, and any frame heard
//    resets it to 1.
//  - A blamed peer is known only with the rank where the abort began.
#ifndef WEFT_COLLECTIVES_ENGINE_LIVENESS_H_
#define WEFT_COLLECTIVES_ENGINE_LIVENESS_H_

#include <cstdint>
#include <optional>

#include "fabric/assert.h"
#include "fabric/clock.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {

// Unanswered probes space out up to this factor.
inline constexpr uint32_t kMaxProbeBackoff = 4;

class Liveness {
 public:
  // The peer counts as heard from at `now_ns` (the lane was just made).
  explicit Liveness(TimeNs now_ns) : last_heard_ns_(now_ns) {}

  // A frame from the peer arrived at `now_ns`.
  void note_heard(TimeNs now_ns) {
    last_heard_ns_ = now_ns;
    probe_backoff_ = 1;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // A probe went out at `now_ns`: the next waits twice as long, up to
  // kMaxProbeBackoff probe intervals.
  void note_probe(TimeNs now_ns);
  // The peer's acknowledgement named the rank it believes silent.
  void note_suspect(uint32_t suspect) {
    peer_suspect_ = suspect;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // The peer's abort: the failure began on rank `origin` and blamed
  // `blamed` (kNoPeer: none).
  void note_abort(uint32_t origin, uint32_t blamed) {
    abort_origin_ = origin;
    abort_blamed_ = blamed;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  TimeNs last_heard_ns() const { return last_heard_ns_; }
  uint32_t probe_backoff() const { return probe_backoff_; }
  // When a probe is due: a probe interval after the peer was last heard
  // from, and back-off intervals after the last probe (kNeverNs when
  // probe_after_ns is 0: never).
  TimeNs probe_due_ns(TimeNs probe_after_ns) const {
    if (probe_after_ns <= 0) return kNeverNs;
    const TimeNs heard = last_heard_ns_ + probe_after_ns;
    const TimeNs spaced = last_probe_ns_ + probe_backoff_ * probe_after_ns;
    return heard > spaced ? heard : spaced;
  }
  // Nothing heard for two probe intervals (a probe went unanswered).
  bool silent_at(TimeNs now_ns, TimeNs probe_after_ns) const {
    return probe_after_ns > 0 && now_ns - last_heard_ns_ >= 2 * probe_after_ns;
  }
  uint32_t peer_suspect() const { return peer_suspect_; }
  std::optional<uint32_t> abort_origin() const { return abort_origin_; }
  uint32_t abort_blamed() const { return abort_blamed_; }

  // WEFT_ASSERTs every invariant above. O(1).
  void check_invariants() const;

 private:
  TimeNs last_heard_ns_;
  TimeNs last_probe_ns_ = 0;
  uint32_t probe_backoff_ = 1;  // 1, 2, 4: unanswered probes space out
  uint32_t peer_suspect_ = kNoPeer;
  std::optional<uint32_t> abort_origin_;
  uint32_t abort_blamed_ = kNoPeer;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_LIVENESS_H_
