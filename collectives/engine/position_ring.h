// PositionRing: the entries [begin, end) of a sequence numbered from 0, in
// a ring buffer that grows as needed: entries join at the end and leave at
// the front, and each is found by its position in the whole sequence. The
// op runner keeps the steps and item states in flight this way, so its
// memory follows what is in flight, not the length of the plan.
#ifndef WEFT_COLLECTIVES_ENGINE_POSITION_RING_H_
#define WEFT_COLLECTIVES_ENGINE_POSITION_RING_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace weft::collectives::internal {

template <typename T>
class PositionRing {
 public:
  PositionRing() = default;
  // An empty ring whose first entry will be at position `begin`.
  explicit PositionRing(uint64_t begin) : begin_(begin), end_(begin) {}

  uint64_t begin() const { return begin_; }
  uint64_t end() const { return end_; }
  bool empty() const { return begin_ == end_; }
  // Whether the entry at `pos` is held (not yet made or already gone
  // otherwise).
  bool holds(uint64_t pos) const { return pos >= begin_ && pos < end_; }
  // REQUIRES: holds(pos).
  T& at(uint64_t pos) { return slots_[pos & mask_]; }
  const T& at(uint64_t pos) const { return slots_[pos & mask_]; }

  void push_back(const T& value) {
    if (end_ - begin_ == slots_.size()) grow();
    slots_[end_ & mask_] = value;
    ++end_;
  }
  // Lets the entries before `pos` go. REQUIRES: pos <= end().
  void pop_front_to(uint64_t pos) {
    if (pos > begin_) begin_ = pos;
  }
  void pop_front() { ++begin_; }
  const T& front() const { return at(begin_); }

 private:
  void grow() {
    const size_t size = slots_.empty() ? 4 : 2 * slots_.size();
    std::vector<T> slots(size);
    for (uint64_t p = begin_; p < end_; ++p) {
      slots[p & (size - 1)] = std::move(slots_[p & mask_]);
    }
    slots_ = std::move(slots);
    mask_ = size - 1;
  }

  std::vector<T> slots_;
  uint64_t mask_ = 0;
  uint64_t begin_ = 0;
  uint64_t end_ = 0;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_POSITION_RING_H_
