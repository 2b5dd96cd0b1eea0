#include "collectives/inprocess_bootstrap.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/group_builder.h"
#include "fabric/errors.h"

namespace weft {
namespace {

// How often a waiting all_gather re-reads the clock for its deadline.
constexpr auto kWaitSlice = std::chrono::milliseconds(1);

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Group>>> form_groups_in_process(
    std::span<Fabric* const> fabrics, const Topology& topology,
    const GroupOptions& options) {
  if (fabrics.size() != topology.ranks()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%u fabrics for a topology of %u ranks", fabrics.size(),
                        topology.ranks()));
  }
  auto shared = std::make_shared<const Topology>(topology);
  const uint64_t max_lanes = max_lanes_per_rank(topology);
  std::vector<std::unique_ptr<GroupBuilder>> builders;
  std::vector<std::vector<uint8_t>> addresses;
  for (uint32_t r = 0; r < fabrics.size(); ++r) {
    if (fabrics[r]->rank() != r) {
      return absl::InvalidArgumentError(
          absl::StrFormat("fabrics[%u] is rank %u; pass them in rank order", r,
                          fabrics[r]->rank()));
    }
    absl::StatusOr<std::unique_ptr<GroupBuilder>> b =
        GroupBuilder::open_shared(*fabrics[r], shared, options, max_lanes);
    if (!b.ok()) return b.status();
    addresses.push_back((*b)->address());
    builders.push_back(*std::move(b));
  }
  std::vector<std::unique_ptr<Group>> groups;
  for (auto& b : builders) {
    absl::StatusOr<std::unique_ptr<Group>> g = b->connect(addresses);
    if (!g.ok()) return g.status();
    groups.push_back(*std::move(g));
  }
  return groups;
}

InProcessBootstrap::InProcessBootstrap(
    std::shared_ptr<InProcessExchange> exchange, uint32_t rank,
    const Clock& clock)
    : exchange_(std::move(exchange)), rank_(rank), clock_(clock) {}

InProcessBootstrap::~InProcessBootstrap() {
  std::lock_guard<std::mutex> lock(exchange_->mu_);
  exchange_->closed_.resize(exchange_->size_);
  exchange_->closed_[rank_] = true;
  exchange_->changed_.notify_all();
}

absl::StatusOr<std::vector<std::vector<uint8_t>>>
InProcessBootstrap::all_gather(std::span<const uint8_t> mine,
                               TimeNs timeout_ns) {
  if (mine.size() > kMaxBlobBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %u contributes %u bytes, over the %u-byte limit",
                        rank_, mine.size(), kMaxBlobBytes));
  }
  InProcessExchange& x = *exchange_;
  const TimeNs deadline_ns = deadline_after(clock_.now_ns(), timeout_ns);
  const size_t round = next_round_++;
  std::unique_lock<std::mutex> lock(x.mu_);
  if (x.rounds_.size() <= round) x.rounds_.resize(round + 1);
  InProcessExchange::Round& r = x.rounds_[round];
  r.blobs.resize(x.size_);
  r.present.resize(x.size_);
  r.blobs[rank_].assign(mine.begin(), mine.end());
  r.present[rank_] = true;
  ++r.count;
  x.changed_.notify_all();
  while (r.count < x.size_) {
    if (clock_.now_ns() >= deadline_ns) {
      std::vector<uint32_t> missing;
      for (uint32_t i = 0; i < x.size_; ++i) {
        if (!r.present[i]) missing.push_back(i);
      }
      return make_error(
          absl::StatusCode::kDeadlineExceeded,
          ErrorPlace{rank_, missing.front(), "", ErrorCause::kDeadline},
          absl::StrFormat("bootstrap exchange %u timed out "
                          "waiting for rank(s) %s",
                          round, absl::StrJoin(missing, ", ")));
    }
    x.changed_.wait_for(lock, kWaitSlice);
  }
  return r.blobs;
}

absl::Status InProcessBootstrap::check_alive() {
  std::lock_guard<std::mutex> lock(exchange_->mu_);
  for (uint32_t i = 0; i < exchange_->closed_.size(); ++i) {
    if (exchange_->closed_[i]) {
      return make_error(absl::StatusCode::kUnavailable,
                        ErrorPlace{rank_, i, "", ErrorCause::kPeerUnavailable},
                        "the rank's bootstrap closed");
    }
  }
  return absl::OkStatus();
}

}  // namespace weft
