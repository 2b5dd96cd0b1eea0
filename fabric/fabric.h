// Fabric: one rank's view of a transport. It opens endpoints (one per peer
// per cable), owns the registered memory slabs and the clock. Collectives see
// only this interface; the simulator (sim/), verbs (verbs/) and TCP (tcp/)
// implement it.
#ifndef WEFT_FABRIC_FABRIC_H_
#define WEFT_FABRIC_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"

namespace weft {

class Fabric {
 public:
  virtual ~Fabric() = default;

  // "sim", "verbs", ...
  virtual std::string_view kind() const = 0;
  // This process's rank in the fabric's world.
  virtual uint32_t rank() const = 0;
  // Wall time on hardware, virtual time in the simulator.
  virtual const Clock& clock() const = 0;
  // How many ranks take turns on the core that runs this one: 1 on
  // hardware (a rank per process); the world's size in the simulator,
  // which steps every rank on one thread. With many, a rank's state is
  // cold in the cache each time it is stepped, so a user of the fabric may
  // ask the cache for it ahead of each step.
  virtual uint32_t ranks_sharing_core() const { return 1; }
  // The caller has nothing to do until a completion arrives or the clock
  // reaches `wake_at_ns` (kNeverNs: no such time). A fabric whose clock
  // moves only while its users wait (the simulation server's, behind the
  // simulated verbs provider) blocks here until one of those happens; the
  // others return at once, and the caller polls again. Default: returns.
  virtual void idle(TimeNs wake_at_ns) { (void)wake_at_ns; }
  // OK while the fabric can make progress; otherwise why it cannot, as a
  // typed error naming this rank (weft's simulated provider once the
  // world's fault plan crashed this rank, or its server is gone: no
  // completion and no clock tick will ever come). A user that waits in
  // idle() asks after it, so it ends with this error instead of waiting
  // for a clock that stands still. Default: OK.
  virtual absl::Status health() const { return absl::OkStatus(); }
  // The fabric's own record of peers that left, as a liveness check for
  // Group::watch: OK while no other rank has left; else Unavailable
  // naming one (error_place: this rank, that peer, kPeerUnavailable), each
  // in turn on successive calls, first to leave first. The simulator's
  // fabric answers from its world's record of crashes, in virtual time;
  // groups formed in one process (form_groups_in_process) watch it. Empty
  // (the default): the fabric cannot say, and the side channel must.
  // REQUIRES of the result: not called after the fabric is destroyed.
  virtual std::function<absl::Status()> departures() const { return {}; }

  // Whether posted sends move only while the host calls into the fabric
  // (poll(), idle()): true for TCP, where bytes a socket buffer could not
  // take wait in this process, and nothing runs in the background. A
  // blocking call on such a fabric keeps calling in until its sends have
  // completed (left this rank), or a rank that returns and then computes
  // for long would hold back its peers. False on verbs (the NIC sends what
  // was posted) and in the simulator. Default: false.
  virtual bool host_moves_sends() const { return false; }

  // Whether every message a connected endpoint sends reaches the peer's
  // endpoint once, whole and in posting order, unless the connection
  // fails, which an error completion says: true for TCP (a stream that
  // retransmits in the kernel). UC verbs and the simulator may lose,
  // duplicate or reorder a message. The contract is UC's either way: a
  // message that finds no receive posted is still dropped. The
  // collectives engine sends no retransmissions and runs no
  // retransmission timers of its own over a fabric that delivers
  // reliably (docs/faults.md, "Recovery"). Default: false.
  virtual bool delivers_reliably() const { return false; }

  // Maps a page-aligned slab of at least `bytes` and registers it once with
  // every protection domain the fabric has or will open. The fabric owns it;
  // it lives as long as the fabric.
  virtual absl::StatusOr<Slab*> create_slab(uint64_t bytes) = 0;

  // Registered user memory (NCCL's ncclCommRegister is the model): makes
  // the caller's `memory` a slab of this fabric, so frames carved from it
  // are sent from and received into directly, without a copy through weft's
  // own slabs. The slab borrows the memory (Slab::borrow): the caller keeps
  // it alive until release_memory(), and the returned Slab* is valid until
  // then. InvalidArgument for empty memory, memory larger than
  // Slab::kMaxBytes, or memory overlapping a region already registered on
  // this fabric. A fabric with a budget of memory regions (verbs: Apple
  // allows about 100 per device) may register lazily and evict the least
  // recently used registration, registering again on its next post; it
  // never evicts a region with work outstanding on it or with holds
  // (hold_memory()). Default: Unimplemented.
  virtual absl::StatusOr<Slab*> register_memory(std::span<std::byte> memory) {
    (void)memory;
    return absl::UnimplementedError(
        "this fabric does not register user memory");
  }
  // Ends a registration made by register_memory(); the memory is the
  // caller's again. FailedPrecondition while work posted on frames of it is
  // outstanding or holds remain; InvalidArgument for a slab that is not a
  // registration of this fabric. Default: Unimplemented.
  virtual absl::Status release_memory(Slab* slab) {
    (void)slab;
    return absl::UnimplementedError(
        "this fabric does not register user memory");
  }
  // Holds a registered region (counted): frames of it may be posted again
  // later (a send not yet acknowledged may be resent after its completion),
  // so a fabric with a registration budget must not evict it until the
  // matching unhold_memory(). Defaults: nothing (fabrics without a budget).
  virtual void hold_memory(const Slab* slab) { (void)slab; }
  virtual void unhold_memory(const Slab* slab) { (void)slab; }

  // Whether a lane may leave a cable that stopped answering for another
  // cable to the same peer (collectives/engine/lane.h, "Moving"): an
  // endpoint opened while the group runs, the old one moved to its error
  // state. True where an endpoint fails silently (UC queue pairs, the
  // simulator); false over TCP, where a dead connection is an error
  // completion, an endpoint put in its error state closes the connection,
  // and a slow peer is not a dead cable.
  virtual bool lanes_may_move() const { return true; }

  // This rank's devices with a port up, by name, sorted: what a discovery
  // of the wiring probes (each the end of one cable). The simulator answers
  // from its world's cabling. Default: none (a fabric without devices).
  virtual std::vector<std::string> devices() const { return {}; }
  // Opens a queue pair on `device` towards rank `peer`. The endpoint must be
  // destroyed before the fabric. As on hardware, `device` need not be the
  // one cabled to `peer`: a queue pair on a port cabled elsewhere opens and
  // connects, and its frames are lost (what a wrong device file does).
  virtual absl::StatusOr<std::unique_ptr<Endpoint>> open(
      std::string_view device, uint32_t peer) = 0;
};

}  // namespace weft

#endif  // WEFT_FABRIC_FABRIC_H_
