// World: a deterministic, single-threaded simulation of N ranks joined by
// unreliable-connected queue pairs. Each rank gets a Fabric (world.fabric(r))
// whose endpoints follow the UC contract of fabric/endpoint.h exactly, over
// links with latency, bandwidth and per-message overhead, with faults
// injected from a FaultPlan. Rank programs run as non-blocking steps; the
// scheduler steps every rank that has something to do and, when all are
// waiting, jumps virtual time to the next event. Same options and seed,
// same trace hash, on every platform.
//
//   WorldOptions options{.topology = *Topology::mesh(4), .link =
//   LinkModel::tb5()}; auto world = World::create(options);
//   ... open endpoints with (*world)->fabric(r), exchange destinations ...
//   RunResult result = (*world)->run(programs);
#ifndef WEFT_SIM_WORLD_H_
#define WEFT_SIM_WORLD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"
#include "fabric/slab.h"
#include "fabric/topology.h"
#include "sim/counters.h"
#include "sim/faults.h"
#include "sim/link_model.h"
#include "sim/trace.h"

namespace weft::sim {

// Apple's RDMA limits (MLX #3162, #4209), enforced when
// WorldOptions::apple_limits is set.
inline constexpr uint32_t kAppleMaxQpsPerDevice = 10;
inline constexpr uint32_t kAppleMaxMrsPerDevice = 100;

struct WorldOptions {
  // Who is cabled to whom (default: a single rank, so the struct can be
  // default-constructed and filled in).
  Topology topology = *Topology::mesh(1);
  LinkModel link = LinkModel::tb5();
  FaultPlan faults;
  uint64_t seed = 1;
  // Each run() ends with kTimeLimit once this much virtual time has passed
  // since it started.
  TimeNs time_limit_ns = 60 * kNsPerS;
  // 10 queue pairs and 100 memory regions per device, as on Apple's RDMA.
  bool apple_limits = false;
  // Keep every TraceEvent (for Perfetto export and inspection). The hash is
  // computed either way.
  bool keep_trace_events = true;
  // Rounds of stepping at one virtual instant before run() gives up with
  // kLivelock (ranks that keep reporting progress without time moving).
  uint64_t max_rounds_per_instant = uint64_t{1} << 24;
};

// One rank's work, driven by the scheduler. Never blocks.
class RankProgram {
 public:
  virtual ~RankProgram() = default;
  // Does whatever can be done now. After kAdvanced the rank is stepped
  // again at the same instant. After kWaiting it is stepped again only when
  // a completion is queued on one of its rank's endpoints, at wake_at_ns,
  // or when a stall of the rank ends: a program must not wait on anything
  // else (another rank's memory, say) without a wake-up.
  virtual Progress step() = 0;
  // Called instead of step() once step() returned kDone: right after, at
  // the same instant (so its kWaiting can name a wake-up), then whenever
  // the rank's endpoints get a completion (or that wake-up comes) while
  // other ranks still run: a finished rank can keep answering its peers, as a
  // real application does by calling into its transport again (a peer
  // resending a frame whose acknowledgement was lost needs an answer). The
  // run's outcome no longer waits for it. Default: nothing to do.
  virtual Progress serve() { return Progress::done(); }
  // What this rank is still waiting for, for hang reports.
  virtual std::string outstanding() const = 0;
};

// Memory of a rank that RDMA WRITEs may target (verbs: a memory region
// and its rkey): `bytes` bytes of one of the rank's slabs from `offset`,
// which writers name [address, address + bytes).
struct MemoryRegion {
  const Slab* slab = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t address = 0;
  // Open to RDMA WRITEs (verbs: IBV_ACCESS_REMOTE_WRITE); a write to a
  // region without it is dropped.
  bool remote_write = false;
};

// Bytes an RDMA WRITE put into a rank's memory region: `bytes` (a frame of
// the region's slab) hold what landed at [address, address + bytes.bytes())
// as the writer named it, under key `rkey`.
struct WrittenRange {
  uint32_t rkey = 0;
  uint64_t address = 0;
  Frame bytes;
};

struct RunResult {
  enum class Outcome {
    kCompleted,  // every program returned kDone (or its rank crashed)
    kHang,       // all waiting, no event and no wake-up left
    kTimeLimit,  // time_limit_ns of virtual time passed
    kLivelock,   // max_rounds_per_instant rounds without time moving
  };
  Outcome outcome = Outcome::kCompleted;
  TimeNs end_ns = 0;
  // For anything but kCompleted: why, then each unfinished rank's
  // outstanding() and its endpoints' posted sends and receives.
  std::string report;
  std::vector<uint32_t> crashed_ranks;

  bool completed() const { return outcome == Outcome::kCompleted; }
};
std::string_view outcome_name(RunResult::Outcome outcome);

class WorldCore;

class World {
 public:
  // InvalidArgument for an empty topology, a bad link model, fault rates
  // outside [0, 1], or a fault plan naming ranks the topology lacks.
  static absl::StatusOr<std::unique_ptr<World>> create(WorldOptions options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  uint32_t ranks() const;
  const WorldOptions& options() const;
  // Rank r's fabric: kind() "sim", the world's virtual clock, slabs and
  // endpoints. REQUIRES: r < ranks(). Endpoints must not outlive the world.
  Fabric& fabric(uint32_t rank);
  const Clock& clock() const;
  // Makes `slab` (memory a rank's process shares with the simulation
  // server) one of rank `rank`'s slabs, so its frames can be posted on the
  // rank's endpoints. REQUIRES: rank < ranks().
  Slab* adopt_slab(uint32_t rank, std::unique_ptr<Slab> slab);

  // Runs programs[r] for each rank r (nullptr: nothing to run) until all are
  // done or the run ends otherwise. May be called again; virtual time and
  // the fabric state carry over.
  RunResult run(std::span<RankProgram* const> programs);
  // After run(): lets what is still in flight land (frames on the wire,
  // aborts of the ranks that failed last) and serves every program on it
  // (RankProgram::serve), until no event is left or `limit_ns` of virtual
  // time passed. Tools call it before judging whether every rank learnt of
  // a failure. Returns the virtual time it ended at.
  TimeNs settle(std::span<RankProgram* const> programs, TimeNs limit_ns);
  // With no programs: handles every event up to and including `t_ns` and
  // leaves the clock at `t_ns` (if later than now). For tests and drivers
  // that post work by hand.
  void advance_to(TimeNs t_ns);
  // With no programs: handles events until none is left; returns the time.
  TimeNs run_until_idle();

  // The virtual time of the next event (a frame leaving or arriving, a
  // timed fault), if any is due. For drivers that advance time themselves
  // (the simulation server), with advance_to().
  std::optional<TimeNs> next_event_ns() const;
  // Each live endpoint of `rank`, described, one per line ("qpn 260 to peer
  // 1 on sim_0_1_0: RTS, 2 sends and 1 receive posted, ...").
  std::string describe_endpoints(uint32_t rank) const;

  // Memory regions RDMA WRITEs to `rank` may target, by key. A write
  // arriving for a key the rank has not registered, a region without
  // remote_write, or a range outside the region is dropped (UC). For
  // drivers that mirror a program's memory in slabs (the simulated verbs
  // provider). InvalidArgument for a rank the world lacks, a slab that is
  // not the rank's, an empty region or one past its slab's end, or an
  // address range that wraps; AlreadyExists for a key the rank has.
  absl::Status register_region(uint32_t rank, uint32_t rkey,
                               const MemoryRegion& region);
  // Forgets the region (writes still in flight to it will be dropped) and
  // the writes to it not yet taken. NotFound for a key the rank lacks.
  absl::Status unregister_region(uint32_t rank, uint32_t rkey);
  // The writes that landed in `rank`'s regions since the last call, in the
  // order they landed (adjacent ones in one region merged), so a driver can
  // copy them on to the memory the regions mirror. REQUIRES: rank < ranks().
  std::vector<WrittenRange> take_writes(uint32_t rank);

  bool crashed(uint32_t rank) const;
  // Whether a frame `rank` sends to `peer` now could arrive: neither rank
  // crashed, and on some cable whose direction rank -> peer is not down both
  // queue pairs (rank's towards peer and peer's towards rank) are ready to send
  // and receive. What stops a failing rank's abort from reaching a peer:
  // judges use it to tell a rank that could not be told from one that was
  // not. False for ranks out of range or without endpoints to each other.
  bool delivers(uint32_t rank, uint32_t peer) const;
  // Whether no link_down has taken the direction rank -> peer of cable
  // `cable` (an index into topology.devices(rank, peer)) by now.
  bool cable_up(uint32_t rank, uint32_t peer, uint32_t cable) const;
  // True while a fault plan's stall of `rank` lasts (its end is an event).
  bool stalled(uint32_t rank) const;
  const Trace& trace() const;
  const Counters& counters() const;
  // Every fault injected so far, rates included, as scripted faults in the
  // order they happened: replaying them as a script (with zero rates)
  // reproduces the run.
  std::vector<ScriptedFault> injected_faults() const;

 private:
  explicit World(std::unique_ptr<WorldCore> core);
  std::unique_ptr<WorldCore> core_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_WORLD_H_
