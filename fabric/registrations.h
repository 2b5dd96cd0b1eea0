// Registrations: the user memory one fabric has registered
// (Fabric::register_memory), with the checks every fabric makes the same
// way: an empty or too large region and one overlapping an earlier
// registration are refused (InvalidArgument), a release of a slab that is
// not a registration is refused, and holds are counted (hold_memory). The
// fabric keeps what is specific to it (its budget, work outstanding on a
// region). Registrations never overlap; each borrows its memory.
#ifndef WEFT_FABRIC_REGISTRATIONS_H_
#define WEFT_FABRIC_REGISTRATIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "fabric/slab.h"

namespace weft {

class Registrations {
 public:
  // Checks `memory` and registers it as a borrowed slab; `place` names the
  // fabric in errors.
  absl::StatusOr<Slab*> add(std::span<std::byte> memory,
                            const ErrorPlace& place);
  // InvalidArgument when `slab` is not registered here; FailedPrecondition
  // when it is held. The fabric checks its own outstanding work first.
  absl::Status check_release(const Slab* slab, const ErrorPlace& place) const;
  // Ends the registration. REQUIRES: check_release() said OK.
  void remove(const Slab* slab);
  // REQUIRES: `slab` is registered here (unhold: and held).
  void hold(const Slab* slab);
  void unhold(const Slab* slab);

  // Whether `slab` is one of these registrations; O(registrations), and a
  // fabric has few.
  bool contains(const Slab* slab) const { return find(slab) != nullptr; }
  size_t size() const { return entries_.size(); }

  // WEFT_ASSERTs that no two registrations overlap and none owns its
  // memory. O(registrations^2).
  void check_invariants() const;

 private:
  struct Entry {
    std::unique_ptr<Slab> slab;
    uint32_t holds = 0;
  };
  const Entry* find(const Slab* slab) const;
  Entry* find(const Slab* slab) {
    return const_cast<Entry*>(std::as_const(*this).find(slab));
  }

  std::vector<Entry> entries_;  // in registration order
};

}  // namespace weft

#endif  // WEFT_FABRIC_REGISTRATIONS_H_
