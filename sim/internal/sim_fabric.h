// SimFabric: one rank's Fabric in a simulated world: the world's virtual
// clock, real mmap'd slabs (one memory region per device of the rank), and
// endpoints on the devices the topology gives the rank, with Apple's
// per-device limits when the world enforces them. Its devices are
// distinct, its slab lookup holds exactly its slabs, and its open endpoints
// are its rank's, each listed once.
#ifndef WEFT_SIM_INTERNAL_SIM_FABRIC_H_
#define WEFT_SIM_INTERNAL_SIM_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/assert.h"
#include "fabric/errors.h"
#include "fabric/fabric.h"
#include "fabric/registrations.h"
#include "sim/internal/check_cadence.h"

namespace weft::sim {

class WorldCore;
namespace internal {
class SimEndpoint;
}

class SimFabric final : public Fabric {
 public:
  SimFabric(WorldCore& core, uint32_t rank);

  std::string_view kind() const override { return "sim"; }
  uint32_t rank() const override { return rank_; }
  const Clock& clock() const override;
  uint32_t ranks_sharing_core() const override;
  // The world's record of crashed ranks (Fabric::departures).
  std::function<absl::Status()> departures() const override;
  absl::StatusOr<Slab*> create_slab(uint64_t bytes) override;
  // Takes `slab` (memory mapped elsewhere: a rank's process's, shared with
  // the simulation server) as one of this fabric's slabs.
  Slab* adopt_slab(std::unique_ptr<Slab> slab);
  // The rank's devices in the world's topology (its true cabling).
  std::vector<std::string> devices() const override;
  // Any device of the rank toward any other rank: a device cabled to
  // another rank than `peer` opens an endpoint whose frames are lost (on
  // the wire, counted dropped_miscabled), as a Mac's would be.
  absl::StatusOr<std::unique_ptr<Endpoint>> open(std::string_view device,
                                                 uint32_t peer) override;
  // Registered user memory: a borrowed slab, one more memory region per
  // device (counted against Apple's limit when the world enforces it).
  absl::StatusOr<Slab*> register_memory(std::span<std::byte> memory) override;
  absl::Status release_memory(Slab* slab) override;
  void hold_memory(const Slab* slab) override;
  void unhold_memory(const Slab* slab) override;

  // True when `frame` lies inside a slab this fabric created or a
  // registration of user memory.
  bool owns(const Frame& frame) const;
  // Called by an endpoint's destructor.
  void release_qp(const std::string& device);
  // Index of `device` among this rank's devices (first-seen order).
  uint32_t device_index(const std::string& device) const;
  // Called by an endpoint's constructor and destructor (they keep
  // WorldCore's prefetch lines for the rank up to date).
  void add_endpoint(internal::SimEndpoint* endpoint);
  void remove_endpoint(internal::SimEndpoint* endpoint);

  // O(devices^2 + slabs + registrations^2 + endpoints log endpoints).
  void check_invariants() const;

 private:
  // A rank opens and closes up to an endpoint per peer and cable: the full
  // check runs every kFullCheckEvery of those calls (see CheckCadence).
  static constexpr uint32_t kFullCheckEvery = 64;

  // Where a device's cable goes: to `peer`, as cable `cable` of the pair
  // (an index into topology.devices(rank, peer)); reaches_peer when that is
  // the rank the endpoint is opened toward.
  struct Cabling {
    uint32_t peer = kNoPeer;
    uint32_t cable = 0;
    bool reaches_peer = false;
  };
  absl::Status check_open(std::string_view device, uint32_t peer,
                          Cabling* cabling) const;
  // check_invariants() every kFullCheckEvery calls (inline: nothing is left
  // of it where checks are off).
  void check_sometimes() {
    if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
  }

  WorldCore& core_;
  uint32_t rank_;
  std::vector<std::string> devices_;  // distinct, in topology order
  std::map<std::string, uint32_t> qps_per_device_;
  std::vector<internal::SimEndpoint*> endpoints_;  // open, in opening order
  std::vector<std::unique_ptr<Slab>> slabs_;
  Registrations registered_;                   // user memory (register_memory)
  absl::flat_hash_set<const Slab*> slab_set_;  // lookups only, never iterated
  internal::CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_INTERNAL_SIM_FABRIC_H_
