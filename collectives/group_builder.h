// Forming a Group, in two phases so that ranks sharing one thread (the
// simulator) can form their groups together:
//
//   1. GroupBuilder::open(): open one endpoint per cable to every peer the
//      topology joins this rank to, carve the group's one slab, and produce
//      this rank's address (its endpoints' destinations).
//   2. connect(addresses of all ranks): connect every endpoint, post the
//      receives, and return the Group.
//
// The addresses travel through a Bootstrap: create_group() does both phases
// around blocking Bootstrap::all_gather calls (hardware, TCP bootstrap);
// form_groups_in_process() (inprocess_bootstrap.h) runs phase 1 for every
// rank, then phase 2 for every rank.
#ifndef WEFT_COLLECTIVES_GROUP_BUILDER_H_
#define WEFT_COLLECTIVES_GROUP_BUILDER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "fabric/fabric.h"
#include "fabric/topology.h"

namespace weft {

namespace collectives::internal {
class Lane;
}  // namespace collectives::internal

absl::StatusOr<std::vector<std::unique_ptr<Group>>> form_groups_in_process(
    std::span<Fabric* const> fabrics, const Topology& topology,
    const GroupOptions& options);

class GroupBuilder {
 public:
  // Phase 1 for rank fabric.rank() of `topology`. InvalidArgument for bad
  // options or a rank outside the topology; the fabric's errors for
  // endpoints and memory; ResourceExhausted when the frames cannot fit in
  // options.max_slab_bytes even at the smallest frame size.
  // REQUIRES: `fabric` outlives the builder and the group.
  static absl::StatusOr<std::unique_ptr<GroupBuilder>> open(
      Fabric& fabric, const Topology& topology, const GroupOptions& options);
  ~GroupBuilder();

  uint32_t rank() const { return rank_; }
  uint32_t size() const { return topology_->ranks(); }
  // What this rank publishes to every other rank.
  const std::vector<uint8_t>& address() const { return address_; }

  // Phase 2: `addresses[r]` is rank r's address(). FailedPrecondition when
  // a rank's address is malformed, lacks an endpoint for this rank, or was
  // made with different GroupOptions. Call once.
  absl::StatusOr<std::unique_ptr<Group>> connect(
      std::span<const std::vector<uint8_t>> addresses);

 private:
  friend absl::StatusOr<std::vector<std::unique_ptr<Group>>>
  form_groups_in_process(std::span<Fabric* const>, const Topology&,
                         const GroupOptions&);
  GroupBuilder(Fabric& fabric, std::shared_ptr<const Topology> topology,
               GroupOptions options);
  // open() for ranks sharing one topology (no copy per rank);
  // `max_lanes` is the most endpoints any of its ranks opens.
  static absl::StatusOr<std::unique_ptr<GroupBuilder>> open_shared(
      Fabric& fabric, std::shared_ptr<const Topology> topology,
      const GroupOptions& options, uint64_t max_lanes);
  absl::Status open_lanes();

  Fabric& fabric_;
  std::shared_ptr<const Topology> topology_;
  GroupOptions options_;
  uint32_t rank_;
  std::vector<std::unique_ptr<collectives::internal::Lane>> lanes_;
  std::vector<uint8_t> address_;
};

// Most endpoints any rank of `topology` opens (every rank sizes its frames
// for the busiest one, so all agree).
uint64_t max_lanes_per_rank(const Topology& topology);

// Slab bytes one endpoint (lane) takes: its receive and send frames of
// options.max_frame_bytes, its acknowledgement and abort frames.
uint64_t lane_slab_bytes(const GroupOptions& options);

// The max_frame_bytes a group uses when each rank opens up to `max_lanes`
// endpoints: options.max_frame_bytes, halved until every lane's slab fits
// options.max_slab_bytes; 0 when even GroupOptions::kMinFrameBytes does
// not fit (formation fails with ResourceExhausted).
uint32_t fitted_max_frame_bytes(const GroupOptions& options,
                                uint64_t max_lanes);

// Payload bytes per frame an operation of `algorithm` picks for items of
// `item_bytes` within `max_frame_bytes` (the rule every rank applies; for
// estimates).
uint32_t frame_payload_bytes(uint64_t item_bytes, Algorithm algorithm,
                             uint32_t max_frame_bytes);

// Both phases through `bootstrap` (whose rank and size must match the
// fabric and topology), then a second exchange so that no rank sends before
// every rank has posted its receives.
absl::StatusOr<std::unique_ptr<Group>> create_group(
    Fabric& fabric, Bootstrap& bootstrap, const Topology& topology,
    const GroupOptions& options, TimeNs bootstrap_timeout_ns = 60 * kNsPerS);

}  // namespace weft

#endif  // WEFT_COLLECTIVES_GROUP_BUILDER_H_
