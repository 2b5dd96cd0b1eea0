// FixedRing: a FIFO of at most N items, for the queues a simulated endpoint
// keeps (posted sends, posted receives, completions). Its storage is taken
// as pushes first need it, doubling from kFirstStorage up to N, and kept:
// an endpoint pays for the most work it ever had outstanding, not for the
// most it could have (a mesh of 256 ranks has 65,280 endpoints, most of
// which never hold more than a few requests), and the steady state
// allocates nothing.
//
// The indices are as narrow as N allows and come first, so an owner can keep
// them on the cache line of its other hot fields; and a queue that drains
// starts again at its first slot, so a queue that is mostly empty (a
// completion queue between polls) keeps reusing the same few cache lines
// instead of walking through all its slots. Neither changes the FIFO order.
// Its size never exceeds its storage, its storage is 0 or a power of two
// from kFirstStorage to N, its head is a slot, and an empty ring's head is
// its first slot.
#ifndef WEFT_SIM_INTERNAL_FIXED_RING_H_
#define WEFT_SIM_INTERNAL_FIXED_RING_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "fabric/assert.h"

namespace weft::sim::internal {

template <typename T, size_t N>
class FixedRing {
  static_assert(std::has_single_bit(N), "a FixedRing's bound is a power of 2");

 public:
  static constexpr size_t kCapacity = N;
  static constexpr size_t kFirstStorage = N < 4 ? N : 4;

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == N; }
  size_t size() const { return size_; }
  // Slots allocated so far (0 to N), and where they lie (nullptr: none;
  // they move when the storage grows).
  size_t storage() const { return storage_; }
  const T* slots() const { return items_.get(); }
  // Grows the storage to hold at least `n` items. REQUIRES: n <= N.
  void reserve(size_t n) {
    WEFT_ASSERT(n <= N, "reserve() past a FixedRing's bound");
    while (storage_ < n) grow();
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  // REQUIRES: !empty().
  T& front() {
    WEFT_ASSERT(!empty(), "front() of an empty FixedRing");
    return items_[head_];
  }
  // REQUIRES: i < size().
  const T& operator[](size_t i) const {
    WEFT_ASSERT(i < size_, "FixedRing index past its size");
    return items_[(head_ + i) & (storage_ - 1)];
  }
  // REQUIRES: !full().
  void push_back(const T& item) {
    WEFT_ASSERT(!full(), "push_back() on a full FixedRing");
    if (size_ == storage_) grow();
    items_[(head_ + size_) & (storage_ - 1)] = item;
    ++size_;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // REQUIRES: !empty().
  void pop_front() {
    WEFT_ASSERT(!empty(), "pop_front() of an empty FixedRing");
    --size_;
    head_ = size_ == 0 ? 0 : static_cast<Index>((head_ + 1) & (storage_ - 1));
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  // O(1).
  void check_invariants() const {
    WEFT_ASSERT(size_ <= storage_ && storage_ <= N,
                "a FixedRing holds more than its storage or its bound");
    WEFT_ASSERT(storage_ == 0 || (std::has_single_bit(size_t{storage_}) &&
                                  storage_ >= kFirstStorage),
                "a FixedRing's storage is not a power of two in its range");
    WEFT_ASSERT(head_ < storage_ || (storage_ == 0 && head_ == 0),
                "a FixedRing's head is outside its slots");
    WEFT_ASSERT(size_ > 0 || head_ == 0,
                "an empty FixedRing does not start again at its first slot");
  }

 private:
  using Index = std::conditional_t<(N <= std::numeric_limits<uint16_t>::max()),
                                   uint16_t, size_t>;

  // Doubles the storage (the first push: kFirstStorage), the items moved
  // to its first slots in order.
  ABSL_ATTRIBUTE_NOINLINE void grow() {
    const size_t bigger = storage_ == 0 ? kFirstStorage : size_t{storage_} * 2;
    auto items = std::make_unique<T[]>(bigger);
    for (size_t i = 0; i < size_; ++i) {
      items[i] = std::move(items_[(head_ + i) & (storage_ - 1)]);
    }
    items_ = std::move(items);
    storage_ = static_cast<Index>(bigger);
    head_ = 0;
  }

  Index head_ = 0;
  Index size_ = 0;
  Index storage_ = 0;
  std::unique_ptr<T[]> items_;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_FIXED_RING_H_
