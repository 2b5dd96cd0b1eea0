// Session: DiscoverySession's implementation (discovery.h), one rank's
// stages: the devices' exchange, then per round the destinations'
// exchange, the ready exchange, probing and the results' exchange.
#ifndef WEFT_WIRING_INTERNAL_SESSION_H_
#define WEFT_WIRING_INTERNAL_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"
#include "fabric/slab.h"
#include "wiring/discovery.h"
#include "wiring/internal/plan.h"
#include "wiring/internal/probe_round.h"
#include "wiring/wiring.h"

namespace weft::wiring::internal {

class Session final : public DiscoverySession {
 public:
  // REQUIRES: validate(options) is OK, fabric.rank() < ranks, `devices`
  // sorted by device_name_less, distinct.
  Session(Fabric& fabric, uint32_t ranks, std::vector<std::string> devices,
          DiscoveryOptions options);
  ~Session() override;

  uint32_t rank() const override { return rank_; }
  Need need() const override;
  const std::vector<uint8_t>& blob() const override { return blob_; }
  absl::Status exchanged(std::span<const std::vector<uint8_t>> blobs) override;
  Progress step() override;
  std::string outstanding() const override;
  absl::StatusOr<Discovery> result() const override;

 private:
  enum class Stage { kDevices, kDestinations, kReady, kProbe, kHeard, kDone };

  absl::Status take_devices(std::span<const std::vector<uint8_t>> blobs);
  absl::Status take_destinations(std::span<const std::vector<uint8_t>> blobs);
  absl::Status take_heard(std::span<const std::vector<uint8_t>> blobs);
  absl::Status start_round();
  absl::Status finish(bool complete);
  absl::Status fail(absl::Status status);
  std::vector<ProbePair> declared_pairs();
  bool declared_all_right() const;
  std::optional<uint32_t> device_id(uint32_t rank,
                                    const std::string& name) const;
  const std::string& name_of(uint32_t device) const;
  Port port_of(uint32_t device) const;
  bool at_a_cable(uint32_t device) const;

  Fabric& fabric_;
  uint32_t ranks_;
  uint32_t rank_;
  std::vector<std::string> devices_;
  DiscoveryOptions options_;
  Stage stage_ = Stage::kDevices;
  std::vector<uint8_t> blob_;
  absl::Status error_;
  TimeNs started_ns_ = 0;
  Slab* slab_ = nullptr;

  // From the first exchange: every rank's devices and addresses; rank r's
  // devices have global ids first_device_[r] and on (internal/plan.h).
  std::vector<std::vector<std::string>> all_devices_;
  std::vector<std::vector<std::string>> addresses_;
  std::vector<uint32_t> first_device_;
  std::unique_ptr<Plan> plan_;
  // A check: how many declared cables are probed first, and whether every
  // declared entry is in one of them.
  // The declared file's cables, as the two ports each joins.
  std::vector<std::pair<Port, Port>> declared_ports_;
  bool declared_entries_paired_ = true;

  // The round: its pairs, this rank's queue pairs (specs) and, for each,
  // its index among the far end's rank's queue pairs.
  uint32_t round_number_ = 0;
  std::vector<ProbePair> round_pairs_;
  std::vector<ProbeSpec> round_specs_;
  std::vector<uint32_t> far_index_;
  std::unique_ptr<ProbeRound> round_;

  std::vector<Cable> cables_;
  DiscoveryStats stats_;
  std::optional<Discovery> result_;
};

}  // namespace weft::wiring::internal

#endif  // WEFT_WIRING_INTERNAL_SESSION_H_
