// RegistrationCache: the memory regions of one device's protection domain,
// kept within a budget. Apple's RDMA allows about 100 memory regions per
// device and fails ibv_reg_mr past that, so weft cannot keep every buffer a
// user registers (Fabric::register_memory) registered at once. weft's own
// slabs are registered when added and stay; a user region is registered
// lazily, at the first post that uses it, and when the budget is full the
// least recently used region is deregistered to make room. A region with
// work requests outstanding (posted, not yet completed, flushed
// completions included) or with holds (Fabric::hold_memory) is never
// evicted; when every registered region is pinned so, a post fails with
// ResourceExhausted instead.
//
// Pure bookkeeping over a Registrar, so it is tested alone with a fake.
// Not thread-safe (one thread drives a fabric).
#ifndef WEFT_VERBS_INTERNAL_REGISTRATION_CACHE_H_
#define WEFT_VERBS_INTERNAL_REGISTRATION_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "verbs/registration_counters.h"

namespace weft::verbs::internal {

// One registered memory region: the library's handle and its local key.
struct Registration {
  void* handle = nullptr;
  uint32_t lkey = 0;
};

// What registers memory with the device (DeviceDomain: ibv_reg_mr and
// ibv_dereg_mr; tests: a fake).
class Registrar {
 public:
  virtual ~Registrar() = default;
  // Registers `memory`, the region of slab `id`; a status naming the
  // failure otherwise.
  virtual absl::StatusOr<Registration> register_region(
      uint64_t id, std::span<std::byte> memory) = 0;
  virtual void deregister_region(const Registration& registration) = 0;
};

class RegistrationCache {
 public:
  // `budget`: most regions registered at once, slabs included.
  // `place` names the device in errors. REQUIRES: budget >= 1.
  RegistrationCache(size_t budget, Registrar& registrar, ErrorPlace place);
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;
  // Deregisters every region still registered.
  ~RegistrationCache() { clear(); }

  // A region weft owns (a slab): registered now, never evicted (remove()
  // ends it). ResourceExhausted when the budget is full of pinned regions.
  // REQUIRES: `id` is not in the cache.
  absl::Status add_permanent(uint64_t id, std::span<std::byte> memory);
  // A user region: recorded now, registered at its first acquire().
  // REQUIRES: `id` is not in the cache.
  void add_lazy(uint64_t id, std::span<std::byte> memory);

  // For one work request on region `id`: registers it if it is not (the
  // least recently used unpinned region makes room when the budget is
  // full), marks it most recently used and counts the request as
  // outstanding until release_work(). Its local key. NotFound for an id
  // not in the cache; ResourceExhausted when the budget is full and every
  // registered region is pinned; the registrar's error when registering
  // fails.
  absl::StatusOr<uint32_t> acquire(uint64_t id);
  // A work request acquire() counted has completed (or will never
  // complete: its queue pair is gone). REQUIRES: one is outstanding.
  void release_work(uint64_t id);

  // Counted holds: a held region is never evicted.
  // REQUIRES: `id` is in the cache; unhold only what was held.
  void hold(uint64_t id);
  void unhold(uint64_t id);

  // Why `id` cannot be removed now (FailedPrecondition: work outstanding
  // or holds), else OK. OK for an id not in the cache.
  absl::Status check_removable(uint64_t id) const;
  // Deregisters (if registered) and forgets `id`; check_removable()'s error
  // while it is busy. OK for an id not in the cache.
  absl::Status remove(uint64_t id);
  // Deregisters and forgets every region, pinned or not (the device is
  // going away).
  void clear();

  bool contains(uint64_t id) const { return regions_.contains(id); }
  bool is_registered(uint64_t id) const;
  // Regions registered right now (never more than budget()).
  size_t registered() const { return registered_; }
  size_t budget() const { return budget_; }
  const RegistrationCounters& counters() const { return counters_; }

 private:
  struct Region {
    std::span<std::byte> memory;
    bool permanent = false;
    bool registered = false;
    Registration registration;
    uint32_t outstanding = 0;  // work requests posted, not yet completed
    uint32_t holds = 0;
    uint64_t last_used = 0;  // use_clock_ at its latest acquire()
  };

  bool pinned(const Region& r) const {
    return r.permanent || r.outstanding > 0 || r.holds > 0;
  }
  // Registers `region` (of `id`), first evicting the least recently used
  // unpinned region when the budget is full.
  absl::Status register_now(uint64_t id, Region& region);
  absl::Status make_room(uint64_t id);
  void deregister(Region& region);

  const size_t budget_;
  Registrar& registrar_;
  const ErrorPlace place_;
  // By slab id (ids only grow, so iteration order is creation order).
  std::map<uint64_t, Region> regions_;
  size_t registered_ = 0;
  uint64_t use_clock_ = 0;
  RegistrationCounters counters_;
};

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_REGISTRATION_CACHE_H_
