#include "collectives/engine/user_memory.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "fabric/assert.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {

absl::StatusOr<uint64_t> UserMemory::add(std::span<std::byte> memory) {
  const ErrorPlace place{fabric_ != nullptr ? fabric_->rank() : 0, kNoPeer, "",
                         ErrorCause::kBadInput};
  if (fabric_ == nullptr) {
    return make_error(absl::StatusCode::kFailedPrecondition, place,
                      "register_memory: the group is closing; register "
                      "with a live group");
  }
  retry_kept();
  for (const Slab* kept : kept_) {
    const std::byte* begin = kept->data();
    if (memory.data() < begin + kept->bytes() &&
        begin < memory.data() + memory.size()) {
      return make_error(
          absl::StatusCode::kFailedPrecondition, place,
          absl::StrFormat(
              "register_memory: [%p, +%u) overlaps memory registered "
              "before at %p whose handle is gone but whose sends or "
              "receives of a failed operation are still posted; destroy "
              "the group (which ends them) and register again",
              static_cast<const void*>(memory.data()), memory.size(),
              static_cast<const void*>(begin)));
    }
  }
  absl::StatusOr<Slab*> slab = fabric_->register_memory(memory);
  if (!slab.ok()) return slab.status();
  entries_.push_back(Entry{next_id_++, *slab, 0, false});
  WEFT_CHECK_INVARIANTS_OF(*this);
  return entries_.back().id;
}

void UserMemory::release(uint64_t id) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.id == id; });
  if (it == entries_.end()) return;
  it->released = true;
  if (it->uses == 0) drop(*it);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

const Slab* UserMemory::find(std::span<const std::byte> buffer) const {
  if (buffer.data() == nullptr || buffer.empty()) return nullptr;
  for (const Entry& e : entries_) {
    const std::byte* begin = e.slab->data();
    if (!e.released && buffer.data() >= begin &&
        buffer.data() + buffer.size() <= begin + e.slab->bytes()) {
      return e.slab;
    }
  }
  return nullptr;
}

bool UserMemory::holds(uint64_t id) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.id == id && !e.released; });
}

UserMemory::Entry* UserMemory::entry(const Slab* slab) {
  for (Entry& e : entries_) {
    if (e.slab == slab) return &e;
  }
  return nullptr;
}

std::unique_ptr<UserMemory::Use> UserMemory::use(
    std::span<const Slab* const> slabs) {
  if (std::none_of(slabs.begin(), slabs.end(),
                   [](const Slab* s) { return s != nullptr; })) {
    return nullptr;
  }
  return std::make_unique<Use>(shared_from_this(), slabs);
}

UserMemory::Use::Use(std::shared_ptr<UserMemory> memory,
                     std::span<const Slab* const> slabs)
    : memory_(std::move(memory)) {
  for (const Slab* slab : slabs) {
    if (slab == nullptr ||
        std::find(slabs_.begin(), slabs_.end(), slab) != slabs_.end()) {
      continue;
    }
    Entry* e = memory_->entry(slab);
    WEFT_ASSERT(e != nullptr, "a use of memory that is not registered");
    ++e->uses;
    memory_->fabric_->hold_memory(slab);
    slabs_.push_back(slab);
  }
}

UserMemory::Use::~Use() {
  for (const Slab* slab : slabs_) memory_->end_use(slab);
}

void UserMemory::end_use(const Slab* slab) {
  if (fabric_ == nullptr) return;  // detached: everything was given back
  Entry* e = entry(slab);
  WEFT_ASSERT(e != nullptr && e->uses > 0, "a use ended twice");
  fabric_->unhold_memory(slab);
  if (--e->uses == 0 && e->released) drop(*e);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void UserMemory::drop(Entry& entry) {
  Slab* slab = entry.slab;
  if (!fabric_->release_memory(slab).ok()) {
    // A failed operation's sends or receives on it are still posted:
    // asked for again later (retry_kept, detach).
    kept_.push_back(slab);
  }
  std::erase_if(entries_, [&](const Entry& e) { return e.slab == slab; });
}

void UserMemory::retry_kept() {
  std::erase_if(kept_,
                [&](Slab* slab) { return fabric_->release_memory(slab).ok(); });
}

void UserMemory::detach() {
  if (fabric_ == nullptr) return;
  for (Entry& e : entries_) {
    // Uses outliving the engine (an Operation the caller still holds)
    // end as no-ops from here on.
    for (uint32_t i = 0; i < e.uses; ++i) fabric_->unhold_memory(e.slab);
    kept_.push_back(e.slab);
  }
  entries_.clear();
  retry_kept();
  for (const Slab* slab : kept_) {
    base::log(base::LogLevel::kWarning,
              "rank %u: registered memory at %p: the fabric still has work "
              "posted on it; it keeps the registration until it closes",
              fabric_->rank(), static_cast<const void*>(slab->data()));
  }
  kept_.clear();
  fabric_ = nullptr;
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void UserMemory::check_invariants() const {
  WEFT_ASSERT(fabric_ != nullptr || (entries_.empty() && kept_.empty()),
              "a detached UserMemory still lists registrations");
  for (size_t i = 0; i < entries_.size(); ++i) {
    WEFT_ASSERT(!entries_[i].released || entries_[i].uses > 0,
                "a released registration with no use is still listed");
    for (size_t j = i + 1; j < entries_.size(); ++j) {
      WEFT_ASSERT(entries_[i].id != entries_[j].id &&
                      entries_[i].slab != entries_[j].slab,
                  "a registration is listed twice");
    }
  }
}

}  // namespace weft::collectives::internal
