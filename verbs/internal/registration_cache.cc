#include "verbs/internal/registration_cache.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/assert.h"

namespace weft::verbs::internal {

RegistrationCache::RegistrationCache(size_t budget, Registrar& registrar,
                                     ErrorPlace place)
    : budget_(budget), registrar_(registrar), place_(std::move(place)) {
  WEFT_ASSERT(budget_ >= 1, "a registration budget of no regions");
}

absl::Status RegistrationCache::add_permanent(uint64_t id,
                                              std::span<std::byte> memory) {
  WEFT_ASSERT(!contains(id), "a region added twice");
  Region region;
  region.memory = memory;
  region.permanent = true;
  if (absl::Status s = register_now(id, region); !s.ok()) return s;
  regions_.emplace(id, region);
  return absl::OkStatus();
}

void RegistrationCache::add_lazy(uint64_t id, std::span<std::byte> memory) {
  WEFT_ASSERT(!contains(id), "a region added twice");
  Region region;
  region.memory = memory;
  regions_.emplace(id, region);
}

absl::StatusOr<uint32_t> RegistrationCache::acquire(uint64_t id) {
  auto it = regions_.find(id);
  if (it == regions_.end()) {
    return make_error(absl::StatusCode::kNotFound, place_,
                      absl::StrFormat("slab %u is not a slab or registered "
                                      "memory of this fabric",
                                      id));
  }
  Region& region = it->second;
  if (region.registered) {
    ++counters_.hits;
  } else {
    ++counters_.misses;
    if (absl::Status s = register_now(id, region); !s.ok()) return s;
  }
  region.last_used = ++use_clock_;
  ++region.outstanding;
  return region.registration.lkey;
}

void RegistrationCache::release_work(uint64_t id) {
  auto it = regions_.find(id);
  WEFT_ASSERT(it != regions_.end() && it->second.outstanding > 0,
              "a completion for work the cache never counted");
  if (it != regions_.end() && it->second.outstanding > 0) {
    --it->second.outstanding;
  }
}

void RegistrationCache::hold(uint64_t id) {
  auto it = regions_.find(id);
  WEFT_ASSERT(it != regions_.end(), "a hold on a region not in the cache");
  if (it != regions_.end()) ++it->second.holds;
}

void RegistrationCache::unhold(uint64_t id) {
  auto it = regions_.find(id);
  WEFT_ASSERT(it != regions_.end() && it->second.holds > 0,
              "unhold without a hold");
  if (it != regions_.end() && it->second.holds > 0) --it->second.holds;
}

absl::Status RegistrationCache::check_removable(uint64_t id) const {
  auto it = regions_.find(id);
  if (it == regions_.end()) return absl::OkStatus();
  const Region& region = it->second;
  if (region.outstanding == 0 && region.holds == 0) return absl::OkStatus();
  ErrorPlace place = place_;
  place.cause = ErrorCause::kBadInput;
  return make_error(
      absl::StatusCode::kFailedPrecondition, place,
      absl::StrFormat("the registered memory (slab %u, %u bytes) still has "
                      "%u work requests outstanding and %u holds; release "
                      "it once its operations have finished",
                      id, region.memory.size(), region.outstanding,
                      region.holds));
}

absl::Status RegistrationCache::remove(uint64_t id) {
  if (absl::Status s = check_removable(id); !s.ok()) return s;
  auto it = regions_.find(id);
  if (it == regions_.end()) return absl::OkStatus();
  deregister(it->second);
  regions_.erase(it);
  return absl::OkStatus();
}

void RegistrationCache::clear() {
  // Newest first, the reverse of registration as teardown goes elsewhere.
  for (auto it = regions_.rbegin(); it != regions_.rend(); ++it) {
    deregister(it->second);
  }
  regions_.clear();
}

bool RegistrationCache::is_registered(uint64_t id) const {
  auto it = regions_.find(id);
  return it != regions_.end() && it->second.registered;
}

absl::Status RegistrationCache::register_now(uint64_t id, Region& region) {
  if (registered_ >= budget_) {
    if (absl::Status s = make_room(id); !s.ok()) return s;
  }
  absl::StatusOr<Registration> registration =
      registrar_.register_region(id, region.memory);
  if (!registration.ok()) return registration.status();
  region.registration = *registration;
  region.registered = true;
  ++registered_;
  ++counters_.registrations;
  WEFT_ASSERT(registered_ <= budget_, "more regions registered than budgeted");
  return absl::OkStatus();
}

absl::Status RegistrationCache::make_room(uint64_t id) {
  Region* victim = nullptr;
  for (auto& [other_id, region] : regions_) {
    if (!region.registered || pinned(region)) continue;
    if (victim == nullptr || region.last_used < victim->last_used) {
      victim = &region;
    }
  }
  if (victim == nullptr) {
    ErrorPlace place = place_;
    place.cause = ErrorCause::kResource;
    return make_error(
        absl::StatusCode::kResourceExhausted, place,
        absl::StrFormat(
            "cannot register slab %u: all %u memory regions of this device's "
            "budget are registered and in use (weft's slabs, and registered "
            "memory with work outstanding or held); release registrations "
            "(Fabric::release_memory) or post from fewer buffers at once, "
            "or raise VerbsFabricOptions::memory_region_budget if the "
            "device allows more regions (Apple allows about 100)",
            id, budget_));
  }
  deregister(*victim);
  ++counters_.evictions;
  return absl::OkStatus();
}

void RegistrationCache::deregister(Region& region) {
  if (!region.registered) return;
  registrar_.deregister_region(region.registration);
  region.registered = false;
  region.registration = Registration{};
  --registered_;
}

}  // namespace weft::verbs::internal
