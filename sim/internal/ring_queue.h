// RingQueue: a FIFO over one growable power-of-two ring buffer. Unlike
// std::deque it keeps its storage when it drains, so a queue that is filled
// and emptied over and over allocates only while it grows.
#ifndef WEFT_SIM_INTERNAL_RING_QUEUE_H_
#define WEFT_SIM_INTERNAL_RING_QUEUE_H_

#include <cassert>
#include <cstddef>
#include <vector>

namespace weft::sim::internal {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  const T& front() const {
    assert(!empty());
    return items_[head_];
  }
  // The i-th item from the front. REQUIRES: i < size().
  const T& operator[](size_t i) const {
    assert(i < size_);
    return items_[(head_ + i) & (items_.size() - 1)];
  }
  void push_back(const T& item) {
    if (size_ == items_.size()) grow();
    items_[(head_ + size_) & (items_.size() - 1)] = item;
    ++size_;
  }
  void pop_front() {
    assert(!empty());
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
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
