// VerbsFabric: weft's Fabric over the system RDMA library, the one that runs
// on real Macs (Apple's librdma.dylib over Thunderbolt 5) and on Linux hosts
// with RDMA hardware (libibverbs.so.1). Each device gets one context and one
// protection domain, shared by every endpoint on it; each slab is registered
// once per protection domain. User memory registered with register_memory()
// is registered with a device at its first post there, through a cache that
// keeps each device within Options::memory_region_budget regions (slabs
// included) by evicting the least recently used region that has no work
// outstanding and no holds. Endpoints are UC queue pairs (see
// verbs/internal/verbs_endpoint.h for their exact shape).
//
// Not thread-safe: one thread drives a fabric and its endpoints at a time.
#ifndef WEFT_VERBS_VERBS_FABRIC_H_
#define WEFT_VERBS_VERBS_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/errors.h"
#include "fabric/fabric.h"
#include "timeline/timeline_recorder.h"
#include "verbs/gid.h"
#include "verbs/loader.h"
#include "verbs/registration_counters.h"

namespace weft::verbs {

namespace internal {
class DeviceDomain;
class DeviceList;
class OpenDevice;
}  // namespace internal

// Memory regions weft keeps registered at once per device by default, its
// slabs included. Apple's RDMA allows about 100 per device and fails
// ibv_reg_mr past that; 96 leaves a few for anything else in the process
// that registers memory on the same device.
inline constexpr size_t kDefaultMemoryRegionBudget = 96;
// The most a budget may be: far above any device's limit (Apple's is about
// 100; Linux hardware allows more), low enough to catch a typo.
inline constexpr size_t kMaxMemoryRegionBudget = 65536;

// What VerbsFabric::open loads and which clock the fabric reports (outside
// the class so its member initializers can serve open()'s default argument).
struct VerbsFabricOptions {
  // The library to load; empty: $WEFT_VERBS_LIBRARY, else the system's.
  std::string library;
  // The clock the fabric reports (the collectives' deadlines read it);
  // nullptr: the wall clock, or on weft's simulated provider its virtual
  // time (so deadlines and retransmission timers are deterministic, in one
  // process or many on the simulation server). REQUIRES: outlives the
  // fabric.
  const Clock* clock = nullptr;
  // Where to write this rank's Perfetto timeline when the fabric is
  // destroyed (timeline/timeline_recorder.h: "%r" becomes the rank); empty:
  // $WEFT_TRACE; neither: no timeline is recorded.
  std::string trace_path;
  // Most memory regions registered at once on each device, slabs included
  // (see kDefaultMemoryRegionBudget). Registered user memory beyond it is
  // registered again at its next post, evicting the least recently used
  // region without work outstanding or holds. 1..kMaxMemoryRegionBudget
  // (open() refuses others). weft::ProcessGroup sets it from
  // $WEFT_MR_BUDGET.
  size_t memory_region_budget = kDefaultMemoryRegionBudget;
};

class VerbsFabric final : public Fabric {
 public:
  using Options = VerbsFabricOptions;

  // Most slabs one fabric registers. Each is one memory region on every
  // device, and Apple allows about 100 regions per device.
  static constexpr size_t kMaxSlabs = 64;

  // Loads the library and lists its devices (kept until the fabric goes, so
  // devices can be opened as endpoints need them). FailedPrecondition when
  // the library is missing or lists no devices, saying what to do.
  // Pass an Options value (or nothing), not `{}`: `{}` is ambiguous with the
  // instance method open(device, peer).
  static absl::StatusOr<std::unique_ptr<VerbsFabric>> open(
      uint32_t rank, Options options = Options());

  VerbsFabric(const VerbsFabric&) = delete;
  VerbsFabric& operator=(const VerbsFabric&) = delete;
  // Writes the timeline when one is recorded (a failure is logged).
  // REQUIRES: every endpoint of this fabric is destroyed.
  ~VerbsFabric() override;

  std::string_view kind() const override { return "verbs"; }
  uint32_t rank() const override { return rank_; }
  const Clock& clock() const override { return *clock_; }
  // On weft's simulated provider, waits in it (weft_sim_verbs_idle): on the
  // simulation server, until this rank has a completion or virtual time
  // reaches `wake_at_ns`. Elsewhere returns at once.
  void idle(TimeNs wake_at_ns) override;
  // Unavailable once the simulated provider refused to wait for this rank
  // (its fault plan crashed it, or the server is gone); OK elsewhere.
  absl::Status health() const override;

  // Maps a slab and registers it with every device opened so far (devices
  // opened later register it when they open). At most kMaxSlabs.
  absl::StatusOr<Slab*> create_slab(uint64_t bytes) override;

  // Registered user memory (fabric/fabric.h): recorded here and registered
  // with a device at the first post from or into it on that device.
  absl::StatusOr<Slab*> register_memory(std::span<std::byte> memory) override;
  absl::Status release_memory(Slab* slab) override;
  void hold_memory(const Slab* slab) override;
  void unhold_memory(const Slab* slab) override;

  // Opens a UC queue pair on `device` towards `peer`, in INIT. Port 1 is
  // checked first (a port that is not ACTIVE is reported with its likely
  // causes before anything is allocated), then the GID table (IPv4-mapped
  // first, link-local as fallback), then the device's protection domain is
  // allocated if this is its first endpoint, then the completion queue and
  // queue pair.
  absl::StatusOr<std::unique_ptr<Endpoint>> open(std::string_view device,
                                                 uint32_t peer) override;

  const VerbsLibrary& library() const { return library_; }
  // The timeline being recorded (Options::trace_path); nullptr: none.
  const timeline::TimelineRecorder* trace() const { return trace_.get(); }
  // The devices the library lists.
  std::vector<std::string> device_names() const;
  // Of those, the ones whose port 1 is active with a usable GID (what a
  // discovery of the wiring probes), sorted by name. A device that cannot
  // be opened or queried is left out.
  std::vector<std::string> devices() const override;
  // Options::memory_region_budget: most regions registered at once per
  // device.
  size_t memory_region_budget() const { return memory_region_budget_; }
  // Memory regions registered on `device` (0 when it is not open).
  size_t memory_regions(std::string_view device) const;
  // How `device`'s registration cache has been used (zeros when it is not
  // open).
  RegistrationCounters registration_counters(std::string_view device) const;

 private:
  // User memory registered with register_memory().
  struct UserRegion {
    std::unique_ptr<Slab> slab;
    uint32_t holds = 0;
  };

  VerbsFabric(uint32_t rank, const VerbsLibrary& library,
              const Options& options,
              std::unique_ptr<internal::DeviceList> devices);
  // Starts recording to `pattern` (the rank substituted); empty: none.
  void start_trace(std::string_view pattern);
  ErrorPlace place(uint32_t peer, std::string_view device) const;
  internal::DeviceDomain* find_domain(std::string_view device) const;
  absl::Status check_peer(uint32_t peer, std::string_view device) const;
  // InvalidArgument when `memory` cannot be registered (empty, too large,
  // overlapping a slab or a registration of this fabric).
  absl::Status check_new_region(std::span<std::byte> memory) const;
  UserRegion* find_user_region(const Slab* slab);
  // The port's LID and the GID to connect with, once the port is ACTIVE.
  absl::StatusOr<std::pair<uint16_t, GidEntry>> ready_port(
      const internal::OpenDevice& device, uint32_t peer) const;
  // Allocates the protection domain of a newly opened device and registers
  // every slab with it.
  absl::StatusOr<internal::DeviceDomain*> adopt(
      std::unique_ptr<internal::OpenDevice> device);

  const uint32_t rank_;
  absl::Status health_;  // see health()
  const VerbsLibrary& library_;
  // The simulated provider's virtual time.
  class ProviderClock final : public Clock {
   public:
    explicit ProviderClock(int64_t (*now_ns)()) : now_ns_(now_ns) {}
    TimeNs now_ns() const override;

   private:
    int64_t (*now_ns_)();
    mutable TimeNs last_ns_ = 0;
  };

  WallClock wall_clock_;
  std::unique_ptr<ProviderClock> provider_clock_;
  // Options::clock, else the provider's, else wall_clock_.
  const Clock* clock_;
  std::unique_ptr<internal::DeviceList> devices_;
  const size_t memory_region_budget_;
  std::vector<std::unique_ptr<Slab>> slabs_;
  // In registration order; outlive the domains (declared before them), as
  // their regions refer to the memory.
  std::vector<UserRegion> user_regions_;
  // In creation order; destroyed in reverse.
  std::vector<std::unique_ptr<internal::DeviceDomain>> domains_;
  // Endpoints opened so far per peer: the next one's cable index.
  std::map<uint32_t, uint32_t> cables_opened_;
  std::unique_ptr<timeline::TimelineRecorder> trace_;
};

}  // namespace weft::verbs

#endif  // WEFT_VERBS_VERBS_FABRIC_H_
