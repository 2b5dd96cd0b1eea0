#include "fabric/registrations.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/assert.h"

namespace weft {
namespace {

bool overlap(const std::byte* a, uint64_t a_bytes, const std::byte* b,
             uint64_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

}  // namespace

absl::StatusOr<Slab*> Registrations::add(std::span<std::byte> memory,
                                         const ErrorPlace& place) {
  if (memory.empty() || memory.size() > Slab::kMaxBytes) {
    return make_error(absl::StatusCode::kInvalidArgument, place,
                      absl::StrFormat("cannot register %u bytes of memory: a "
                                      "registration holds 1 to %u bytes",
                                      memory.size(), Slab::kMaxBytes));
  }
  for (const Entry& e : entries_) {
    if (overlap(memory.data(), memory.size(), e.slab->data(),
                e.slab->bytes())) {
      return make_error(
          absl::StatusCode::kInvalidArgument, place,
          absl::StrFormat(
              "memory [%p, +%u) overlaps the region registered "
              "at [%p, +%u); release that one first, or register "
              "one region covering both",
              static_cast<const void*>(memory.data()), memory.size(),
              static_cast<const void*>(e.slab->data()), e.slab->bytes()));
    }
  }
  entries_.push_back(Entry{Slab::borrow(memory.data(), memory.size()), 0});
  WEFT_CHECK_INVARIANTS_OF(*this);
  return entries_.back().slab.get();
}

absl::Status Registrations::check_release(const Slab* slab,
                                          const ErrorPlace& place) const {
  const Entry* e = find(slab);
  if (e == nullptr) {
    return make_error(absl::StatusCode::kInvalidArgument, place,
                      "release_memory: the slab is not a registration of "
                      "this fabric (released already, or made by "
                      "create_slab or by another fabric)");
  }
  if (e->holds > 0) {
    return make_error(
        absl::StatusCode::kFailedPrecondition, place,
        absl::StrFormat("release_memory: the region at %p is held %u "
                        "time(s) (frames of it may still be resent); "
                        "unhold_memory it first",
                        static_cast<const void*>(slab->data()), e->holds));
  }
  return absl::OkStatus();
}

void Registrations::remove(const Slab* slab) {
  std::erase_if(entries_, [&](const Entry& e) { return e.slab.get() == slab; });
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void Registrations::hold(const Slab* slab) {
  Entry* e = find(slab);
  WEFT_ASSERT(e != nullptr, "hold_memory on a slab that is not registered");
  ++e->holds;
}

void Registrations::unhold(const Slab* slab) {
  Entry* e = find(slab);
  WEFT_ASSERT(e != nullptr && e->holds > 0,
              "unhold_memory without a matching hold_memory");
  --e->holds;
}

const Registrations::Entry* Registrations::find(const Slab* slab) const {
  for (const Entry& e : entries_) {
    if (e.slab.get() == slab) return &e;
  }
  return nullptr;
}

void Registrations::check_invariants() const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Slab& a = *entries_[i].slab;
    WEFT_ASSERT(!a.owns_memory(), "a registration owns its memory");
    for (size_t j = i + 1; j < entries_.size(); ++j) {
      const Slab& b = *entries_[j].slab;
      WEFT_ASSERT(!overlap(a.data(), a.bytes(), b.data(), b.bytes()),
                  "two registrations of one fabric overlap");
    }
  }
}

}  // namespace weft
