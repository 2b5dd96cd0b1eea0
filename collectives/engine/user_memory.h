// UserMemory: the user buffers a rank registered with its group's fabric
// (Group::register_memory), shared by the engine, the operations using
// them and the caller's handles. An operation whose buffer lies wholly
// inside a registration takes a Use of it for as long as it may post
// frames of it: the fabric holds the region meanwhile (Fabric::
// hold_memory), and a handle destroyed during that time ends the
// registration only when the last Use ends.
//
// A registration the fabric will not give back yet (a failed operation's
// sends or receives on it are still posted) is kept aside and asked for
// again at the next registration and when the engine closes (detach():
// after its lanes are gone, every registration left is given back, and the
// handles and Uses that outlive it do nothing more).
//
// Invariants: ids are unique and registrations never overlap (the fabric
// refuses that); a registration's count of uses equals the live Use
// objects naming it; a released registration with no use left is gone
// (or kept aside); nothing is listed once detached.
#ifndef WEFT_COLLECTIVES_ENGINE_USER_MEMORY_H_
#define WEFT_COLLECTIVES_ENGINE_USER_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/fabric.h"
#include "fabric/slab.h"

namespace weft::collectives::internal {

class UserMemory : public std::enable_shared_from_this<UserMemory> {
 public:
  // REQUIRES: `fabric` outlives this, or detach() is called before it
  // goes.
  explicit UserMemory(Fabric& fabric) : fabric_(&fabric) {}
  UserMemory(const UserMemory&) = delete;
  UserMemory& operator=(const UserMemory&) = delete;

  // Registers `memory` with the fabric; the id names it in release().
  // InvalidArgument from the fabric: empty, too large, overlapping;
  // FailedPrecondition when it overlaps a registration kept aside, or once
  // detached.
  absl::StatusOr<uint64_t> add(std::span<std::byte> memory);
  // The engine is closing and its lanes are gone: gives every registration
  // back to the fabric and forgets the fabric.
  void detach();
  // The caller's handle is gone: the registration ends now, or when its
  // last Use ends.
  void release(uint64_t id);
  // The registered slab holding all of `buffer`, or nullptr (then the
  // operation stages through weft's own frames).
  const Slab* find(std::span<const std::byte> buffer) const;
  // Whether registration `id` is live (added, its handle not yet gone,
  // not detached).
  bool holds(uint64_t id) const;
  size_t size() const { return entries_.size(); }

  // An operation's use of up to two registrations (its input and output).
  class Use {
   public:
    Use(std::shared_ptr<UserMemory> memory, std::span<const Slab* const> slabs);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    std::shared_ptr<UserMemory> memory_;
    std::vector<const Slab*> slabs_;  // distinct
  };
  // A Use of the distinct non-null `slabs`; nullptr when there are none.
  std::unique_ptr<Use> use(std::span<const Slab* const> slabs);

  // WEFT_ASSERTs the invariants above. O(registrations).
  void check_invariants() const;

 private:
  struct Entry {
    uint64_t id = 0;
    Slab* slab = nullptr;
    uint32_t uses = 0;
    bool released = false;
  };
  Entry* entry(const Slab* slab);
  void end_use(const Slab* slab);
  // Returns the registration to the fabric and forgets it (or keeps it
  // aside when the fabric refuses).
  void drop(Entry& entry);
  // Asks the fabric again for the registrations kept aside.
  void retry_kept();

  Fabric* fabric_;  // nullptr once detached
  std::vector<Entry> entries_;
  std::vector<Slab*> kept_;  // released, refused by the fabric so far
  uint64_t next_id_ = 1;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_USER_MEMORY_H_
