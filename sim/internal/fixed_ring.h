// FixedRing: a FIFO of at most N items in inline storage, for the queues a
// simulated endpoint keeps (posted sends, posted receives, completions), so
// the steady state allocates nothing.
#ifndef WEFT_SIM_INTERNAL_FIXED_RING_H_
#define WEFT_SIM_INTERNAL_FIXED_RING_H_

#include <array>
#include <cassert>
#include <cstddef>

namespace weft::sim::internal {

template <typename T, size_t N>
class FixedRing {
 public:
  static constexpr size_t kCapacity = N;

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == N; }
  size_t size() const { return size_; }

  T& front() {
    assert(!empty());
    return items_[head_];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return items_[(head_ + i) % N];
  }
  // REQUIRES: !full().
  void push_back(const T& item) {
    assert(!full());
    items_[(head_ + size_) % N] = item;
    ++size_;
  }
  // REQUIRES: !empty().
  void pop_front() {
    assert(!empty());
    head_ = (head_ + 1) % N;
    --size_;
  }

 private:
  // The indices first: an empty check touches the line the owner's other
  // fields are on, not one past the items.
  size_t head_ = 0;
  size_t size_ = 0;
  std::array<T, N> items_{};
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_FIXED_RING_H_
