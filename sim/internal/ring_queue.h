// RingQueue: a FIFO over one growable power-of-two ring buffer. Unlike
// std::deque it keeps its storage when it drains, so a queue that is filled
// and emptied over and over allocates only while it grows. Its capacity is
// zero or a power of two, and never less than its size.
#ifndef WEFT_SIM_INTERNAL_RING_QUEUE_H_
#define WEFT_SIM_INTERNAL_RING_QUEUE_H_

#include <bit>
#include <cstddef>
#include <utility>
#include <vector>

#include "fabric/assert.h"

namespace weft::sim::internal {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // REQUIRES: !empty().
  const T& front() const {
    WEFT_ASSERT(!empty(), "front() of an empty RingQueue");
    return items_[head_];
  }
  // REQUIRES: !empty().
  const T& back() const {
    WEFT_ASSERT(!empty(), "back() of an empty RingQueue");
    return items_[(head_ + size_ - 1) & (items_.size() - 1)];
  }
  // The i-th item from the front. REQUIRES: i < size().
  const T& operator[](size_t i) const {
    WEFT_ASSERT(i < size_, "RingQueue index past its size");
    return items_[(head_ + i) & (items_.size() - 1)];
  }
  void push_back(const T& item) {
    if (size_ == items_.size()) grow();
    items_[(head_ + size_) & (items_.size() - 1)] = item;
    ++size_;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  // REQUIRES: !empty().
  void pop_front() {
    WEFT_ASSERT(!empty(), "pop_front() of an empty RingQueue");
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
    WEFT_CHECK_INVARIANTS_OF(*this);
  }

  // O(1).
  void check_invariants() const {
    WEFT_ASSERT(items_.empty() || std::has_single_bit(items_.size()),
                "a RingQueue's capacity is not a power of two");
    WEFT_ASSERT(size_ <= items_.size(), "a RingQueue holds more than it can");
    WEFT_ASSERT(head_ < items_.size() || (items_.empty() && head_ == 0),
                "a RingQueue's head is outside its ring");
  }

 private:
  static constexpr size_t kFirstCapacity = 8;

  void grow() {
    std::vector<T> bigger(items_.empty() ? kFirstCapacity : 2 * items_.size());
    for (size_t i = 0; i < size_; ++i) {
      bigger[i] = items_[(head_ + i) & (items_.size() - 1)];
    }
    items_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> items_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace weft::sim::internal

#endif  // WEFT_SIM_INTERNAL_RING_QUEUE_H_
