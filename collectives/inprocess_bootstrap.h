// Bootstrap for ranks that live in one process.
//
// form_groups_in_process(): the simulator's way. All ranks share one thread,
// so no rank can block in an exchange waiting for the others; instead this
// runs phase 1 of group formation (GroupBuilder::open) for every rank, then
// phase 2 (connect) for every rank, handing each the others' addresses.
//
// InProcessExchange / InProcessBootstrap: a Bootstrap for ranks that run as
// threads of one process (each blocking in all_gather until every rank has
// contributed), e.g. tests of create_group() over a thread-safe fabric.
#ifndef WEFT_COLLECTIVES_INPROCESS_BOOTSTRAP_H_
#define WEFT_COLLECTIVES_INPROCESS_BOOTSTRAP_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/topology.h"

namespace weft {

// fabrics[r] is rank r's fabric. REQUIRES: fabrics.size() ==
// topology.ranks(), fabrics[r]->rank() == r, and the fabrics outlive the
// groups.
absl::StatusOr<std::vector<std::unique_ptr<Group>>> form_groups_in_process(
    std::span<Fabric* const> fabrics, const Topology& topology,
    const GroupOptions& options);

// Shared by the InProcessBootstrap of every rank.
class InProcessExchange {
 public:
  explicit InProcessExchange(uint32_t size) : size_(size) {}
  uint32_t size() const { return size_; }

 private:
  friend class InProcessBootstrap;
  struct Round {
    std::vector<std::vector<uint8_t>> blobs;
    std::vector<bool> present;
    uint32_t count = 0;
  };
  uint32_t size_;
  std::mutex mu_;
  std::condition_variable changed_;
  // Round r: every rank's r-th all_gather. A deque, so a waiting rank's
  // reference survives another rank appending rounds.
  std::deque<Round> rounds_;
  std::vector<bool> closed_;
};

class InProcessBootstrap final : public Bootstrap {
 public:
  // REQUIRES: rank < exchange->size(); `clock` outlives this object.
  InProcessBootstrap(std::shared_ptr<InProcessExchange> exchange, uint32_t rank,
                     const Clock& clock);
  // Closing tells the other ranks this one is gone (check_alive()).
  ~InProcessBootstrap() override;

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return exchange_->size(); }
  absl::StatusOr<std::vector<std::vector<uint8_t>>> all_gather(
      std::span<const uint8_t> mine, TimeNs timeout_ns) override;
  absl::Status check_alive() override;

 private:
  std::shared_ptr<InProcessExchange> exchange_;
  uint32_t rank_;
  const Clock& clock_;
  size_t next_round_ = 0;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_INPROCESS_BOOTSTRAP_H_
