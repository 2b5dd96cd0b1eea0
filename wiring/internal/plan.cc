#include "wiring/internal/plan.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "fabric/assert.h"

namespace weft::wiring::internal {

Plan::Plan(std::vector<uint32_t> device_rank, uint32_t qps_per_device)
    : device_rank_(std::move(device_rank)),
      qps_per_device_(qps_per_device),
      resolved_(device_rank_.size(), false),
      probed_(device_rank_.size() * device_rank_.size(), false),
      candidates_(device_rank_.size()) {
  WEFT_ASSERT(qps_per_device_ >= 1, "a plan needs a queue pair per device");
  const auto n = static_cast<uint32_t>(device_rank_.size());
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b) {
      if (device_rank_[a] != device_rank_[b]) candidates_[a].push_back(b);
    }
  }
}

void Plan::probe_first(std::span<const ProbePair> pairs) {
  first_.assign(pairs.begin(), pairs.end());
  std::sort(first_.begin(), first_.end(), [](const auto& x, const auto& y) {
    return std::pair(x.a, x.b) < std::pair(y.a, y.b);
  });
  first_.erase(std::unique(first_.begin(), first_.end(),
                           [](const auto& x, const auto& y) {
                             return x.a == y.a && x.b == y.b;
                           }),
               first_.end());
}

bool Plan::done() const {
  if (!first_.empty()) return false;
  for (uint32_t a = 0; a < candidates_.size(); ++a) {
    if (resolved_[a]) continue;
    for (uint32_t b : candidates_[a]) {
      if (!resolved_[b] && !probed(a, b)) return false;
    }
  }
  return true;
}

std::vector<ProbePair> Plan::greedy(std::span<const ProbePair> candidates) {
  std::vector<uint32_t> load(device_rank_.size(), 0);
  std::vector<ProbePair> round;
  for (const ProbePair& p : candidates) {
    if (load[p.a] >= qps_per_device_ || load[p.b] >= qps_per_device_) continue;
    ++load[p.a];
    ++load[p.b];
    round.push_back(p);
  }
  return round;
}

std::vector<ProbePair> Plan::next_round() {
  if (!first_.empty()) {
    std::vector<ProbePair> round = greedy(first_);
    // What the round takes leaves the list (both are ordered by (a, b)).
    std::vector<ProbePair> rest;
    size_t k = 0;
    for (const ProbePair& p : first_) {
      if (k < round.size() && round[k].a == p.a && round[k].b == p.b) {
        ++k;
      } else {
        rest.push_back(p);
      }
    }
    first_ = std::move(rest);
    return round;
  }
  std::vector<uint32_t> load(device_rank_.size(), 0);
  std::vector<ProbePair> round;
  for (uint32_t a = 0; a < candidates_.size(); ++a) {
    std::vector<uint32_t>& list = candidates_[a];
    if (resolved_[a]) {
      list.clear();
      continue;
    }
    // Drops the pairs that will never be probed while choosing.
    size_t keep = 0;
    for (size_t k = 0; k < list.size(); ++k) {
      const uint32_t b = list[k];
      if (resolved_[b] || probed(a, b)) continue;
      list[keep++] = b;
      if (load[a] < qps_per_device_ && load[b] < qps_per_device_) {
        ++load[a];
        ++load[b];
        round.push_back({a, b});
      }
    }
    list.resize(keep);
  }
  return round;
}

void Plan::record(std::span<const ProbePair> round,
                  std::span<const PairResult> results) {
  WEFT_ASSERT(round.size() == results.size(), "a result per probed pair");
  for (size_t k = 0; k < round.size(); ++k) {
    const ProbePair& p = round[k];
    probed_[uint64_t{p.a} * device_rank_.size() + p.b] = true;
    if (results[k].a_heard_b || results[k].b_heard_a) {
      resolved_[p.a] = true;
      resolved_[p.b] = true;
    }
  }
}

}  // namespace weft::wiring::internal
