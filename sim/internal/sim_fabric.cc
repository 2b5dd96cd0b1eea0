#include "sim/internal/sim_fabric.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "fabric/assert.h"
#include "fabric/errors.h"
#include "sim/internal/sim_endpoint.h"
#include "sim/internal/world_core.h"

namespace weft::sim {

SimFabric::SimFabric(WorldCore& core, uint32_t rank)
    : core_(core), rank_(rank) {
  const Topology& topo = core.options().topology;
  for (uint32_t peer = 0; peer < topo.ranks(); ++peer) {
    for (const std::string& device : topo.devices(rank, peer)) {
      if (std::find(devices_.begin(), devices_.end(), device) ==
          devices_.end()) {
        devices_.push_back(device);
      }
    }
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

const Clock& SimFabric::clock() const { return core_.clock(); }

std::function<absl::Status()> SimFabric::departures() const {
  // Each call names the next rank that crashed, first to crash first
  // (this rank's own crash is its fabric's health(), not a departure).
  return [&core = core_, rank = rank_, next = size_t{0}]() mutable {
    const auto& gone = core.departures();
    while (next < gone.size() && gone[next].rank == rank) ++next;
    if (next == gone.size()) return absl::OkStatus();
    const WorldCore::Departure d = gone[next++];
    return make_error(
        absl::StatusCode::kUnavailable,
        ErrorPlace{rank, d.rank, "", ErrorCause::kPeerUnavailable},
        absl::StrFormat("rank %u crashed at %.3f us (the simulator's record "
                        "of departures)",
                        d.rank, static_cast<double>(d.at_ns) / kNsPerUs));
  };
}

uint32_t SimFabric::ranks_sharing_core() const { return core_.ranks(); }

absl::StatusOr<Slab*> SimFabric::create_slab(uint64_t bytes) {
  // Each slab is one memory region on every device of the rank.
  if (core_.options().apple_limits && !devices_.empty() &&
      slabs_.size() + registered_.size() >= kAppleMaxMrsPerDevice) {
    return make_error(
        absl::StatusCode::kResourceExhausted,
        ErrorPlace{rank_, kNoPeer, devices_.front(), ErrorCause::kResource},
        absl::StrFormat("a new slab would be memory region %u on this device, "
                        "over Apple's limit of %u per device (MLX #3162); "
                        "carve frames out of fewer, larger slabs",
                        slabs_.size() + registered_.size() + 1,
                        kAppleMaxMrsPerDevice));
  }
  absl::StatusOr<std::unique_ptr<Slab>> slab = Slab::create(bytes);
  if (!slab.ok()) return slab.status();
  return adopt_slab(*std::move(slab));
}

Slab* SimFabric::adopt_slab(std::unique_ptr<Slab> slab) {
  Slab* raw = slab.get();
  slabs_.push_back(std::move(slab));
  slab_set_.insert(raw);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return raw;
}

absl::StatusOr<Slab*> SimFabric::register_memory(std::span<std::byte> memory) {
  ErrorPlace place{rank_, kNoPeer, devices_.empty() ? "" : devices_.front(),
                   ErrorCause::kBadInput};
  if (core_.options().apple_limits && !devices_.empty() &&
      slabs_.size() + registered_.size() >= kAppleMaxMrsPerDevice) {
    place.cause = ErrorCause::kResource;
    return make_error(absl::StatusCode::kResourceExhausted, place,
                      absl::StrFormat("a new registration would be memory "
                                      "region %u on this device, over Apple's "
                                      "limit of %u per device; release one",
                                      slabs_.size() + registered_.size() + 1,
                                      kAppleMaxMrsPerDevice));
  }
  return registered_.add(memory, place);
}

absl::Status SimFabric::release_memory(Slab* slab) {
  const ErrorPlace place{rank_, kNoPeer, "", ErrorCause::kBadInput};
  if (absl::Status s = registered_.check_release(slab, place); !s.ok()) {
    return s;
  }
  for (const internal::SimEndpoint* ep : endpoints_) {
    if (!ep->uses_slab(slab)) continue;
    return make_error(
        absl::StatusCode::kFailedPrecondition,
        ErrorPlace{rank_, ep->peer(), ep->info().device, ErrorCause::kBadInput},
        absl::StrFormat("release_memory: sends or receives posted on the "
                        "region at %p are not complete yet; poll their "
                        "completions first",
                        static_cast<const void*>(slab->data())));
  }
  registered_.remove(slab);
  return absl::OkStatus();
}

void SimFabric::hold_memory(const Slab* slab) { registered_.hold(slab); }

void SimFabric::unhold_memory(const Slab* slab) { registered_.unhold(slab); }

bool SimFabric::owns(const Frame& frame) const {
  const Slab* slab = frame.slab();
  if (slab == nullptr) return false;
  if (!slab->owns_memory()) {
    return registered_.contains(slab) && slab->contains(frame);
  }
  // Checked at every post: a rank has few slabs (a group makes one), and a
  // short scan beats hashing.
  constexpr size_t kScanSlabs = 4;
  bool known = false;
  if (slabs_.size() <= kScanSlabs) {
    for (const auto& s : slabs_) known |= s.get() == slab;
  } else {
    known = slab_set_.contains(slab);
  }
  return known && slab->contains(frame);
}

uint32_t SimFabric::device_index(const std::string& device) const {
  auto it = std::find(devices_.begin(), devices_.end(), device);
  return static_cast<uint32_t>(it - devices_.begin());
}

void SimFabric::add_endpoint(internal::SimEndpoint* endpoint) {
  WEFT_ASSERT(endpoint->rank() == rank_, "another rank's endpoint added");
  endpoints_.push_back(endpoint);
  core_.set_prefetch_lines(rank_, endpoints_);
  check_sometimes();
}

void SimFabric::remove_endpoint(internal::SimEndpoint* endpoint) {
  std::erase(endpoints_, endpoint);
  core_.set_prefetch_lines(rank_, endpoints_);
  check_sometimes();
}

void SimFabric::release_qp(const std::string& device) {
  auto it = qps_per_device_.find(device);
  if (it != qps_per_device_.end() && it->second > 0) --it->second;
  check_sometimes();
}

void SimFabric::check_invariants() const {
  for (size_t i = 0; i < devices_.size(); ++i) {
    WEFT_ASSERT(std::find(devices_.begin() + i + 1, devices_.end(),
                          devices_[i]) == devices_.end(),
                "a rank's device is listed twice");
  }
  WEFT_ASSERT(slab_set_.size() == slabs_.size(),
              "the slab lookup disagrees with the slabs");
  for (const auto& slab : slabs_) {
    WEFT_ASSERT(slab_set_.contains(slab.get()),
                "a slab is missing from the slab lookup");
  }
  registered_.check_invariants();
  const bool apple = core_.options().apple_limits;
  for (const auto& [device, qps] : qps_per_device_) {
    WEFT_ASSERT(
        std::find(devices_.begin(), devices_.end(), device) != devices_.end(),
        "queue pairs counted on a device the rank does not have");
    WEFT_ASSERT(!apple || qps <= kAppleMaxQpsPerDevice,
                "more queue pairs on a device than Apple's limit");
  }
  std::vector<const internal::SimEndpoint*> open(endpoints_.begin(),
                                                 endpoints_.end());
  std::sort(open.begin(), open.end(), std::less<>());
  WEFT_ASSERT(std::adjacent_find(open.begin(), open.end()) == open.end(),
              "an endpoint is listed open twice");
  for (const internal::SimEndpoint* ep : open) {
    WEFT_ASSERT(ep->rank() == rank_, "another rank's endpoint is listed open");
  }
}

std::vector<std::string> SimFabric::devices() const {
  std::vector<std::string> sorted = devices_;
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

absl::Status SimFabric::check_open(std::string_view device, uint32_t peer,
                                   Cabling* cabling) const {
  const Topology& topo = core_.options().topology;
  ErrorPlace place{rank_, peer, std::string(device), ErrorCause::kBadInput};
  if (peer >= topo.ranks() || peer == rank_) {
    place.peer = kNoPeer;
    return make_error(absl::StatusCode::kInvalidArgument, place,
                      absl::StrFormat("cannot open an endpoint to rank %u: the "
                                      "world has ranks 0..%u and a rank does "
                                      "not connect to itself",
                                      peer, topo.ranks() - 1));
  }
  if (device_index(std::string(device)) == devices_.size()) {
    return make_error(
        absl::StatusCode::kInvalidArgument, place,
        devices_.empty()
            ? absl::StrFormat("rank %u has no device (no cable joins it to "
                              "any rank in the topology)",
                              rank_)
            : absl::StrFormat("rank %u has no device %s; its devices: %s "
                              "(fix the device file's entry, or run "
                              "weft-devices check)",
                              rank_, device, absl::StrJoin(devices(), ", ")));
  }
  // The cable the device is the end of: toward `peer` where the device
  // joins it, else the first pair it joins (a port cabled elsewhere).
  *cabling = Cabling{};
  for (uint32_t to = 0; to < topo.ranks(); ++to) {
    const std::vector<std::string>& joining = topo.devices(rank_, to);
    auto it = std::find(joining.begin(), joining.end(), device);
    if (it == joining.end()) continue;
    const auto cable = static_cast<uint32_t>(it - joining.begin());
    if (to == peer) {
      *cabling = Cabling{peer, cable, true};
      break;
    }
    if (cabling->peer == kNoPeer) *cabling = Cabling{to, cable, false};
  }
  WEFT_ASSERT(cabling->peer != kNoPeer, "a rank's device joins no pair");
  if (core_.options().apple_limits) {
    auto count = qps_per_device_.find(std::string(device));
    if (count != qps_per_device_.end() &&
        count->second >= kAppleMaxQpsPerDevice) {
      place.cause = ErrorCause::kResource;
      return make_error(absl::StatusCode::kResourceExhausted, place,
                        absl::StrFormat("device %s already has %u queue pairs, "
                                        "Apple's limit per device (MLX #4209); "
                                        "use fewer queue pairs per device",
                                        device, kAppleMaxQpsPerDevice));
    }
  }
  return absl::OkStatus();
}

std::string SimFabric::far_end(std::string_view device) const {
  const Topology& topo = core_.options().topology;
  for (uint32_t to = 0; to < topo.ranks(); ++to) {
    const std::vector<std::string>& joining = topo.devices(rank_, to);
    auto it = std::find(joining.begin(), joining.end(), device);
    if (it == joining.end()) continue;
    const auto cable = static_cast<size_t>(it - joining.begin());
    const std::vector<std::string>& back = topo.devices(to, rank_);
    return cable < back.size()
               ? absl::StrFormat("rank %u's %s", to, back[cable])
               : absl::StrFormat("rank %u, which names no device back", to);
  }
  return "no port";
}

absl::StatusOr<std::unique_ptr<Endpoint>> SimFabric::open(
    std::string_view device, uint32_t peer) {
  Cabling cabling;
  if (absl::Status s = check_open(device, peer, &cabling); !s.ok()) return s;
  ++qps_per_device_[std::string(device)];
  // The frames take the device's cable, wherever it goes.
  const uint32_t link =
      core_.transport().link_index(rank_, cabling.peer, cabling.cable);
  const uint32_t pair = core_.transport().pair_index(rank_, cabling.peer);
  return std::unique_ptr<Endpoint>(new internal::SimEndpoint(
      core_, *this, peer, cabling.cable, std::string(device), link, pair,
      cabling.reaches_peer));
}

}  // namespace weft::sim
