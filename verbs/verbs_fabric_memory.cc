// VerbsFabric's registered user memory: register_memory() records a
// borrowed slab with every device's registration cache (registered there
// at its first post), release_memory() ends it once nothing is outstanding
// or held, and holds pin it against eviction on every device.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "verbs/internal/device_domain.h"
#include "verbs/internal/registration_cache.h"
#include "verbs/verbs_fabric.h"

namespace weft::verbs {
namespace {

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlaps(const std::byte* a, uint64_t a_bytes, const std::byte* b,
              uint64_t b_bytes) {
  const auto a0 = reinterpret_cast<uintptr_t>(a);
  const auto b0 = reinterpret_cast<uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

}  // namespace

absl::Status VerbsFabric::check_new_region(std::span<std::byte> memory) const {
  ErrorPlace where = place(kNoPeer, "");
  where.cause = ErrorCause::kBadInput;
  if (memory.empty() || memory.data() == nullptr) {
    return make_error(absl::StatusCode::kInvalidArgument, where,
                      "register_memory() of no memory; pass the buffer "
                      "operations will send from or receive into");
  }
  if (memory.size() > Slab::kMaxBytes) {
    return make_error(
        absl::StatusCode::kInvalidArgument, where,
        absl::StrFormat("register_memory() of %u bytes, more than the %u a "
                        "slab may hold; register the buffer in parts",
                        memory.size(), Slab::kMaxBytes));
  }
  auto clash = [&](const Slab& slab) {
    return overlaps(memory.data(), memory.size(), slab.data(), slab.bytes());
  };
  const bool on_slab = std::any_of(slabs_.begin(), slabs_.end(),
                                   [&](const auto& s) { return clash(*s); });
  const bool on_region =
      std::any_of(user_regions_.begin(), user_regions_.end(),
                  [&](const UserRegion& r) { return clash(*r.slab); });
  if (on_slab || on_region) {
    return make_error(
        absl::StatusCode::kInvalidArgument, where,
        absl::StrFormat("register_memory() of %u bytes overlapping %s of "
                        "this fabric; register each buffer once, or release "
                        "the earlier registration first",
                        memory.size(),
                        on_slab ? "a slab" : "memory already registered"));
  }
  return absl::OkStatus();
}

VerbsFabric::UserRegion* VerbsFabric::find_user_region(const Slab* slab) {
  for (UserRegion& region : user_regions_) {
    if (region.slab.get() == slab) return &region;
  }
  return nullptr;
}

absl::StatusOr<Slab*> VerbsFabric::register_memory(
    std::span<std::byte> memory) {
  if (absl::Status s = check_new_region(memory); !s.ok()) return s;
  UserRegion region;
  region.slab = Slab::borrow(memory.data(), memory.size());
  for (const auto& domain : domains_) {
    domain->regions().add_lazy(region.slab->id(), memory);
  }
  user_regions_.push_back(std::move(region));
  return user_regions_.back().slab.get();
}

absl::Status VerbsFabric::release_memory(Slab* slab) {
  UserRegion* region = find_user_region(slab);
  if (region == nullptr) {
    ErrorPlace where = place(kNoPeer, "");
    where.cause = ErrorCause::kBadInput;
    return make_error(absl::StatusCode::kInvalidArgument, where,
                      "release_memory() of a slab that is not memory "
                      "registered with this fabric (register_memory())");
  }
  const uint64_t id = slab->id();
  if (region->holds > 0) {
    ErrorPlace where = place(kNoPeer, "");
    where.cause = ErrorCause::kBadInput;
    return make_error(
        absl::StatusCode::kFailedPrecondition, where,
        absl::StrFormat("release_memory() of registered memory (slab %u) "
                        "with %u holds; unhold_memory() it first, once its "
                        "sends are acknowledged",
                        id, region->holds));
  }
  for (const auto& domain : domains_) {
    if (absl::Status s = domain->regions().check_removable(id); !s.ok()) {
      return s;
    }
  }
  for (const auto& domain : domains_) {
    if (absl::Status s = domain->regions().remove(id); !s.ok()) return s;
  }
  std::erase_if(user_regions_,
                [&](const UserRegion& r) { return r.slab.get() == slab; });
  return absl::OkStatus();
}

void VerbsFabric::hold_memory(const Slab* slab) {
  UserRegion* region = find_user_region(slab);
  if (region == nullptr) return;  // weft's own slabs are never evicted
  ++region->holds;
  for (const auto& domain : domains_) domain->regions().hold(slab->id());
}

void VerbsFabric::unhold_memory(const Slab* slab) {
  UserRegion* region = find_user_region(slab);
  if (region == nullptr || region->holds == 0) return;
  --region->holds;
  for (const auto& domain : domains_) domain->regions().unhold(slab->id());
}

}  // namespace weft::verbs
