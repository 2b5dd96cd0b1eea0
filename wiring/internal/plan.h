// Plan: which pairs of devices are probed in which round. Every rank runs
// the same plan over the same inputs (every rank's devices, every round's
// results), so all agree on each round's pairs without sending them.
//
// Devices have global ids: rank 0's devices first, each rank's in
// device_name_less order. A pair joins two devices of different ranks. A
// round holds at most `qps_per_device` pairs per device (a pair takes a
// queue pair on each of its two devices), chosen greedily in id order, so
// every pair left out has a device whose budget the round filled. A device
// found at one end of a cable is resolved: one cable is one port at each
// end, so no pair with it is probed again.
#ifndef WEFT_WIRING_INTERNAL_PLAN_H_
#define WEFT_WIRING_INTERNAL_PLAN_H_

#include <cstdint>
#include <span>
#include <vector>

namespace weft::wiring::internal {

struct ProbePair {
  uint32_t a = 0;  // global device ids, a < b, on different ranks
  uint32_t b = 0;
};

// What a round found for one pair: whether each end heard the other.
struct PairResult {
  bool a_heard_b = false;  // frames b sent reached a
  bool b_heard_a = false;
};

class Plan {
 public:
  // `device_rank[g]` is the rank of global device g (ascending).
  // REQUIRES: qps_per_device >= 1.
  Plan(std::vector<uint32_t> device_rank, uint32_t qps_per_device);

  // Restricts the next rounds to `pairs` (a check probes what a file
  // declares first) until they are all probed; then every pair of
  // unresolved devices not yet probed is a candidate. Call before the
  // first round.
  void probe_first(std::span<const ProbePair> pairs);

  // Whether a round is left (some candidate pair of unresolved devices).
  bool done() const;
  // Whether the pairs given to probe_first() are all probed.
  bool first_done() const { return first_.empty(); }
  // The next round's pairs, ordered by (a, b). Empty when done().
  std::vector<ProbePair> next_round();
  // Records a round's results, `results[k]` for `round[k]`.
  void record(std::span<const ProbePair> round,
              std::span<const PairResult> results);

  bool resolved(uint32_t device) const { return resolved_[device]; }
  uint32_t devices() const {
    return static_cast<uint32_t>(device_rank_.size());
  }
  uint32_t rank_of(uint32_t device) const { return device_rank_[device]; }

 private:
  bool probed(uint32_t a, uint32_t b) const {
    return probed_[uint64_t{a} * device_rank_.size() + b];
  }
  std::vector<ProbePair> greedy(std::span<const ProbePair> candidates);

  std::vector<uint32_t> device_rank_;
  uint32_t qps_per_device_;
  std::vector<bool> resolved_;
  // probed_[a * devices + b] for a < b.
  std::vector<bool> probed_;
  // The pairs still to probe first (probe_first()).
  std::vector<ProbePair> first_;
  // Per device a, the devices b > a it may still be probed with; pairs
  // that were probed or touch a resolved device are dropped lazily.
  std::vector<std::vector<uint32_t>> candidates_;
};

}  // namespace weft::wiring::internal

#endif  // WEFT_WIRING_INTERNAL_PLAN_H_
