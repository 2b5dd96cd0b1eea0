#include "collectives/engine/liveness.h"

#include <algorithm>
#include <bit>

namespace weft::collectives::internal {

void Liveness::note_probe(TimeNs now_ns) {
  last_probe_ns_ = now_ns;
  probe_backoff_ = std::min(2 * probe_backoff_, kMaxProbeBackoff);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void Liveness::check_invariants() const {
  WEFT_ASSERT(
      std::has_single_bit(probe_backoff_) && probe_backoff_ <= kMaxProbeBackoff,
      "the probe back-off is not a power of two up to kMaxProbeBackoff");
  WEFT_ASSERT(abort_blamed_ == kNoPeer || abort_origin_.has_value(),
              "a blamed peer without the abort's origin");
}

}  // namespace weft::collectives::internal
