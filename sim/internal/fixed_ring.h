// FixedRing: a FIFO of at most N items in inline storage, for the queues a
// simulated endpoint keeps (posted sends, posted receives, completions), so
// the steady state allocates nothing.
//
// The indices are as narrow as N allows and come first, so an owner can keep
// them on the cache line of its other hot fields; and a queue that drains
// starts again at its first slot, so a queue that is mostly empty (a
// completion queue between polls) keeps reusing the same few cache lines
// instead of walking through all N slots. Neither changes the FIFO order.
// Its size never exceeds N, its head is a slot, and an empty ring's head is
// its first slot.
#ifndef WEFT_SIM_INTERNAL_FIXED_RING_H_
#define WEFT_SIM_INTERNAL_FIXED_RING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fabric/assert.h"

namespace weft::sim::internal {

template <typename T, size_t N>
class FixedRing {
 public:
  static constexpr size_t kCapacity = N;

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == N; }
  size_t size() const { return size_; }

  // REQUIRES: !empty().
  T& front() {
    WEFT_ASSERT(!empty(), "front() of an empty FixedRing");
    return items_[head_];
  }
  // REQUIRES: i < size().
  const T& operator[](size_t i) const {
    WEFT_ASSERT(i < size_, "FixedRing index past its size");
    return items_[(head_ + i) % N];
  }
  // REQUIRES: !full().
  void push_back(const T& item) {
    WEFT_ASSERT(!full(), "push_back() on a full FixedRing");
    items_[(head_ + size_) % N] = item;
    ++size_;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // REQUIRES: !empty().
  void pop_front() {
    WEFT_ASSERT(!empty(), "pop_front() of an empty FixedRing");
    --size_;
    head_ = size_ == 0 ? 0 : static_cast<Index>((head_ + 1) % N);
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  // O(1).
  void check_invariants() const {
    WEFT_ASSERT(size_ <= N, "a FixedRing holds more than its capacity");
    WEFT_ASSERT(head_ < N, "a FixedRing's head is outside its slots");
    WEFT_ASSERT(size_ > 0 || head_ == 0,
                "an empty FixedRing does not start again at its first slot");
  }

 private:
  using Index = std::conditional_t<(N <= std::numeric_limits<uint16_t>::max()),
                                   uint16_t, size_t>;

  Index head_ = 0;
  Index size_ = 0;
  std::array<T, N> items_{};
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_FIXED_RING_H_
