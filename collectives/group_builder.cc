#include "collectives/group_builder.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/bootstrap/address.h"
#include "collectives/engine/engine.h"
#include "collectives/engine/lane.h"
#include "fabric/errors.h"

namespace weft {
namespace {}  // namespace

// Most endpoints any rank of `topology` opens: every rank sizes its frames
// for the busiest rank, so all agree on the frame size.
uint64_t max_lanes_per_rank(const Topology& topology) {
  uint64_t most = 0;
  for (uint32_t i = 0; i < topology.ranks(); ++i) {
    most = std::max(most, topology.devices_of(i));
  }
  return most;
}

namespace {

collectives::internal::LaneConfig lane_config(const GroupOptions& o) {
  return {o.depth, o.max_frame_bytes, o.recovery, o.send_queue_bytes};
}

}  // namespace

uint64_t lane_slab_bytes(const GroupOptions& options) {
  return lane_config(options).region_bytes();
}

uint32_t fitted_max_frame_bytes(const GroupOptions& options,
                                uint64_t max_lanes) {
  GroupOptions fitted = options;
  while (max_lanes * lane_slab_bytes(fitted) > options.max_slab_bytes) {
    if (fitted.max_frame_bytes == GroupOptions::kMinFrameBytes) return 0;
    fitted.max_frame_bytes /= 2;
  }
  return fitted.max_frame_bytes;
}

uint32_t frame_payload_bytes(uint64_t item_bytes, Algorithm algorithm,
                             uint32_t max_frame_bytes) {
  return collectives::internal::chunk_payload_bytes(item_bytes, algorithm,
                                                    max_frame_bytes);
}

GroupBuilder::GroupBuilder(Fabric& fabric,
                           std::shared_ptr<const Topology> topology,
                           GroupOptions options)
    : fabric_(fabric),
      topology_(std::move(topology)),
      options_(options),
      rank_(fabric.rank()) {}

GroupBuilder::~GroupBuilder() = default;

absl::StatusOr<std::unique_ptr<GroupBuilder>> GroupBuilder::open(
    Fabric& fabric, const Topology& topology, const GroupOptions& options) {
  return open_shared(fabric, std::make_shared<const Topology>(topology),
                     options, max_lanes_per_rank(topology));
}

absl::StatusOr<std::unique_ptr<GroupBuilder>> GroupBuilder::open_shared(
    Fabric& fabric, std::shared_ptr<const Topology> topology,
    const GroupOptions& options, uint64_t max_lanes) {
  absl::Status s = options.validate();
  if (!s.ok()) return s;
  if (fabric.rank() >= topology->ranks()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the fabric is rank %u but the topology has ranks 0..%u", fabric.rank(),
        topology->ranks() - 1));
  }
  GroupOptions effective = options;
  effective.max_frame_bytes = fitted_max_frame_bytes(options, max_lanes);
  if (effective.max_frame_bytes == 0) {
    return make_error(
        absl::StatusCode::kResourceExhausted,
        ErrorPlace{fabric.rank(), kNoPeer, "", ErrorCause::kResource},
        absl::StrFormat("%u endpoints with depth %u do not fit in "
                        "max_slab_bytes %u even with %u-byte frames; "
                        "raise max_slab_bytes or lower depth",
                        max_lanes, options.depth, options.max_slab_bytes,
                        GroupOptions::kMinFrameBytes));
  }
  std::unique_ptr<GroupBuilder> b(
      new GroupBuilder(fabric, std::move(topology), effective));
  s = b->open_lanes();
  if (!s.ok()) return s;
  return b;
}

absl::Status GroupBuilder::open_lanes() {
  collectives::internal::LaneConfig config = lane_config(options_);
  config.reliable = fabric_.delivers_reliably();
  std::vector<std::pair<uint32_t, uint32_t>> wanted;  // (peer, cable)
  for (uint32_t peer = 0; peer < size(); ++peer) {
    const auto cables =
        static_cast<uint32_t>(topology_->devices(rank_, peer).size());
    for (uint32_t c = 0; c < cables; ++c) wanted.emplace_back(peer, c);
  }
  collectives::internal::RankAddress address{
      rank_, size(), collectives::internal::options_fingerprint(options_), {}};
  if (!wanted.empty()) {
    // Every lane's data frames, then every lane's control frames, then
    // every lane's abort frame (written only when the group fails): a page
    // is written only when a frame in it is, and the control frames are
    // small (an acknowledgement is a header), so kept together many lanes'
    // acknowledgements share a page where each would otherwise write one
    // of its own; the data frames stay aligned as their size allows. Over
    // an endpoint that takes two-part messages the data frames' headers
    // are among the control frames too (lane.h), so an acknowledgement
    // landing in a receive slot writes there, and each payload starts on
    // a page of its own.
    std::vector<std::unique_ptr<Endpoint>> endpoints;
    endpoints.reserve(wanted.size());
    uint64_t frames_bytes = 0;   // all lanes' data frames
    uint64_t control_bytes = 0;  // all lanes' control frames
    for (const auto& [peer, cable] : wanted) {
      absl::StatusOr<std::unique_ptr<Endpoint>> ep =
          fabric_.open(topology_->devices(rank_, peer)[cable], peer);
      if (!ep.ok()) return ep.status();
      const bool split = (*ep)->max_parts() >= 2;
      frames_bytes += config.frames_bytes(split);
      control_bytes += config.control_bytes(split);
      endpoints.push_back(*std::move(ep));
    }
    absl::StatusOr<Slab*> slab =
        fabric_.create_slab(wanted.size() * config.region_bytes());
    if (!slab.ok()) return slab.status();
    uint64_t frames_at = 0;
    uint64_t control_at = frames_bytes;
    uint64_t abort_at = frames_bytes + control_bytes;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto [peer, cable] = wanted[i];
      const bool split = endpoints[i]->max_parts() >= 2;
      auto lane = std::make_unique<collectives::internal::Lane>(
          std::move(endpoints[i]), peer, cable, config, **slab, frames_at,
          control_at, abort_at, fabric_.clock());
      frames_at += config.frames_bytes(split);
      control_at += config.control_bytes(split);
      abort_at += collectives::internal::kRareFramesBytes;
      absl::StatusOr<Destination> d = lane->destination();
      if (!d.ok()) return d.status();
      address.lanes.push_back({peer, cable, *d});
      lanes_.push_back(std::move(lane));
    }
  }
  address_ = collectives::internal::encode_address(address);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Group>> GroupBuilder::connect(
    std::span<const std::vector<uint8_t>> addresses) {
  auto fail = [&](uint32_t peer, const std::string& what) {
    return make_error(absl::StatusCode::kFailedPrecondition,
                      ErrorPlace{rank_, peer, "", ErrorCause::kFabric}, what);
  };
  if (addresses.size() != size()) {
    return fail(kNoPeer, absl::StrFormat("connect got %u addresses for a "
                                         "group of %u ranks",
                                         addresses.size(), size()));
  }
  const uint64_t fingerprint =
      collectives::internal::options_fingerprint(options_);
  for (auto& lane : lanes_) {
    const uint32_t peer = lane->peer();
    absl::StatusOr<collectives::internal::RankAddress> a =
        collectives::internal::decode_address(addresses[peer]);
    if (!a.ok()) return fail(peer, std::string(a.status().message()));
    if (a->rank != peer || a->size != size() ||
        a->options_fingerprint != fingerprint) {
      return fail(peer, absl::StrFormat(
                            "the address from rank %u says rank %u of %u with "
                            "options %016x; this rank expects rank %u of %u "
                            "with options %016x (every rank must pass the "
                            "same GroupOptions and topology)",
                            peer, a->rank, a->size, a->options_fingerprint,
                            peer, size(), fingerprint));
    }
    auto it =
        std::find_if(a->lanes.begin(), a->lanes.end(), [&](const auto& l) {
          return l.peer == rank_ && l.cable == lane->cable();
        });
    if (it == a->lanes.end()) {
      return fail(peer, absl::StrFormat("rank %u published no endpoint for "
                                        "cable %u to this rank; do both ranks "
                                        "use the same topology?",
                                        peer, lane->cable()));
    }
    absl::Status s = lane->connect(it->destination);
    if (!s.ok()) return s;
  }
  auto engine = std::make_shared<collectives::internal::Engine>(
      fabric_.clock(), rank_, std::move(lanes_), fabric_.ranks_sharing_core());
  engine->set_idle_fabric(&fabric_);
  // A pair's only dead cable is routed through the other ranks only from
  // a rank joined to every other (lane.h, "Relaying"): when both ends of
  // the pair are, so is every relay to both.
  bool joined_to_all = true;
  for (uint32_t p = 0; p < topology_->ranks(); ++p) {
    joined_to_all &= p == rank_ || topology_->connected(rank_, p);
  }
  // Two ranks have no third to relay through.
  engine->allow_relays(joined_to_all && topology_->ranks() > 2);
  // A fabric that keeps a record of departed peers (the simulator's) is
  // the group's watch from the start: a crash is named within one watch
  // interval, as the side channel names a dead process on hardware.
  if (std::function<absl::Status()> departures = fabric_.departures()) {
    engine->watch(std::move(departures), Group::kWatchIntervalNs);
  }
  return std::unique_ptr<Group>(new Group(std::move(engine), topology_,
                                          /*members=*/{}, rank_, options_));
}

absl::StatusOr<std::unique_ptr<Group>> create_group(
    Fabric& fabric, Bootstrap& bootstrap, const Topology& topology,
    const GroupOptions& options, TimeNs bootstrap_timeout_ns) {
  if (bootstrap.rank() != fabric.rank() ||
      bootstrap.size() != topology.ranks()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the bootstrap is rank %u of %u but the fabric is rank %u and the "
        "topology has %u ranks",
        bootstrap.rank(), bootstrap.size(), fabric.rank(), topology.ranks()));
  }
  absl::StatusOr<std::unique_ptr<GroupBuilder>> builder =
      GroupBuilder::open(fabric, topology, options);
  if (!builder.ok()) return builder.status();
  absl::StatusOr<std::vector<std::vector<uint8_t>>> all =
      bootstrap.all_gather((*builder)->address(), bootstrap_timeout_ns);
  if (!all.ok()) return all.status();
  absl::StatusOr<std::unique_ptr<Group>> group = (*builder)->connect(*all);
  if (!group.ok()) return group.status();
  absl::StatusOr<std::vector<std::vector<uint8_t>>> ready =
      bootstrap.all_gather({}, bootstrap_timeout_ns);
  if (!ready.ok()) return ready.status();
  return group;
}

}  // namespace weft
