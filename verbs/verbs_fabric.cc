#include "verbs/verbs_fabric.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "fabric/work_id.h"
#include "verbs/device_info.h"
#include "verbs/internal/device.h"
#include "verbs/internal/device_domain.h"
#include "verbs/internal/verbs_endpoint.h"
#include "verbs/internal/verbs_error.h"

namespace weft::verbs {

using internal::DeviceDomain;
using internal::fabric_error;
using internal::OpenDevice;

absl::StatusOr<std::unique_ptr<VerbsFabric>> VerbsFabric::open(
    uint32_t rank, Options options) {
  if (options.memory_region_budget == 0 ||
      options.memory_region_budget > kMaxMemoryRegionBudget) {
    ErrorPlace where;
    where.rank = rank;
    where.cause = ErrorCause::kBadInput;
    return make_error(
        absl::StatusCode::kInvalidArgument, where,
        absl::StrFormat("a memory region budget of %u is outside 1..%u (0 "
                        "leaves no room for weft's own slabs); give one in "
                        "that range (default %u)",
                        options.memory_region_budget, kMaxMemoryRegionBudget,
                        kDefaultMemoryRegionBudget));
  }
  absl::StatusOr<const VerbsLibrary*> library =
      VerbsLibrary::load(options.library);
  if (!library.ok()) return library.status();
  ErrorPlace place;
  place.rank = rank;
  auto devices = internal::DeviceList::get(**library, place);
  if (!devices.ok()) return devices.status();
  std::unique_ptr<VerbsFabric> fabric(
      new VerbsFabric(rank, **library, options, std::move(*devices)));
  const char* env = std::getenv("WEFT_TRACE");
  fabric->start_trace(!options.trace_path.empty() ? options.trace_path
                      : env != nullptr            ? env
                                                  : "");
  return fabric;
}

void VerbsFabric::start_trace(std::string_view pattern) {
  if (pattern.empty()) return;
  // Unix time on the wall clock, so ranks' files line up; a simulated
  // provider's virtual time as it is.
  const TimeNs origin_ns =
      clock_ == &wall_clock_
          ? timeline::TimelineRecorder::unix_origin_ns(*clock_)
          : 0;
  trace_ = std::make_unique<timeline::TimelineRecorder>(
      timeline::TimelineRecorder::path_for_rank(pattern, rank_), rank_, *clock_,
      origin_ns);
  base::log(base::LogLevel::kInfo,
            "rank %u: recording a Perfetto timeline for %s", rank_,
            trace_->path());
}

VerbsFabric::VerbsFabric(uint32_t rank, const VerbsLibrary& library,
                         const Options& options,
                         std::unique_ptr<internal::DeviceList> devices)
    : rank_(rank),
      library_(library),
      provider_clock_(
          library.api().sim_now_ns != nullptr
              ? std::make_unique<ProviderClock>(library.api().sim_now_ns)
              : nullptr),
      clock_(options.clock != nullptr ? options.clock
             : provider_clock_ != nullptr
                 ? static_cast<const Clock*>(provider_clock_.get())
                 : &wall_clock_),
      devices_(std::move(devices)),
      memory_region_budget_(options.memory_region_budget) {}

TimeNs VerbsFabric::ProviderClock::now_ns() const {
  // Monotonic as Clock promises, whatever the provider answers (-1 for a
  // world it cannot build).
  last_ns_ = std::max<TimeNs>(last_ns_, now_ns_());
  return last_ns_;
}

void VerbsFabric::idle(TimeNs wake_at_ns) {
  if (library_.api().sim_idle == nullptr || !health_.ok()) return;
  const int rc =
      library_.api().sim_idle(wake_at_ns == kNeverNs ? -1 : wake_at_ns);
  // EIO: the provider cannot wait for this rank any more (it printed why:
  // the fault plan crashed it, or the server is gone); nothing will ever
  // complete. ETIMEDOUT and the like are the wait's own business.
  if (rc == EIO) {
    health_ = make_error(
        absl::StatusCode::kUnavailable,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kFabric},
        "weft's simulated provider can no longer wait for this rank (EIO): "
        "the simulation's fault plan crashed it or its server is gone (the "
        "provider's line on stderr says which); no completion will come");
  }
}

absl::Status VerbsFabric::health() const { return health_; }

VerbsFabric::~VerbsFabric() {
  while (!domains_.empty()) {
    if (domains_.back()->endpoints() != 0) {
      base::log(
          base::LogLevel::kError,
          "rank %u, device %s: the fabric is destroyed while %d endpoints "
          "still use it; destroy endpoints first",
          rank_, domains_.back()->place().device, domains_.back()->endpoints());
    }
    domains_.pop_back();  // regions, protection domain, context
  }
  slabs_.clear();  // unmapped only once no region refers to them
  devices_.reset();
  if (trace_ == nullptr) return;
  if (trace_->left_out() > 0) {
    base::log(base::LogLevel::kWarning,
              "rank %u: the timeline kept its first %u events and left out %u",
              rank_, trace_->size(), trace_->left_out());
  }
  if (absl::Status s = trace_->write(); !s.ok()) {
    base::log(base::LogLevel::kError, "rank %u: %s", rank_, s.message());
  } else {
    base::log(base::LogLevel::kInfo,
              "rank %u: timeline of %u events written to %s", rank_,
              trace_->size(), trace_->path());
  }
}

ErrorPlace VerbsFabric::place(uint32_t peer, std::string_view device) const {
  ErrorPlace p;
  p.rank = rank_;
  p.peer = peer;
  p.device = std::string(device);
  return p;
}

std::vector<std::string> VerbsFabric::device_names() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < devices_->size(); ++i) {
    names.push_back(devices_->name(i));
  }
  return names;
}

std::vector<std::string> VerbsFabric::devices() const {
  std::vector<std::string> ready;
  for (size_t i = 0; i < devices_->size(); ++i) {
    absl::StatusOr<std::unique_ptr<OpenDevice>> device = OpenDevice::open(
        library_, devices_->device(i), place(kNoPeer, devices_->name(i)));
    if (!device.ok()) continue;
    absl::StatusOr<abi::ibv_port_attr> port = (*device)->query_port(kPort);
    if (!port.ok() || port->state != abi::IBV_PORT_ACTIVE) continue;
    if (!choose_gid((*device)->gid_table(kPort, *port)).has_value()) continue;
    ready.push_back(devices_->name(i));
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

DeviceDomain* VerbsFabric::find_domain(std::string_view device) const {
  for (const auto& domain : domains_) {
    if (domain->place().device == device) return domain.get();
  }
  return nullptr;
}

size_t VerbsFabric::memory_regions(std::string_view device) const {
  const DeviceDomain* domain = find_domain(device);
  return domain == nullptr ? 0 : domain->memory_regions();
}

RegistrationCounters VerbsFabric::registration_counters(
    std::string_view device) const {
  const DeviceDomain* domain = find_domain(device);
  return domain == nullptr ? RegistrationCounters{}
                           : domain->regions().counters();
}

absl::StatusOr<Slab*> VerbsFabric::create_slab(uint64_t bytes) {
  if (slabs_.size() >= kMaxSlabs) {
    return fabric_error(
        absl::StatusCode::kResourceExhausted, place(kNoPeer, ""),
        ErrorCause::kResource,
        absl::StrFormat("a verbs fabric registers at most %u slabs (each is "
                        "a memory region on every device, and Apple allows "
                        "about 100 per device); use fewer, larger slabs",
                        kMaxSlabs));
  }
  absl::StatusOr<std::unique_ptr<Slab>> slab = Slab::create(bytes);
  if (!slab.ok()) return slab.status();
  for (size_t i = 0; i < domains_.size(); ++i) {
    absl::Status s = domains_[i]->register_slab(**slab);
    if (!s.ok()) {
      for (size_t j = 0; j < i; ++j)
        domains_[j]->deregister_slab((*slab)->id());
      return s;
    }
  }
  slabs_.push_back(std::move(*slab));
  return slabs_.back().get();
}

absl::Status VerbsFabric::check_peer(uint32_t peer,
                                     std::string_view device) const {
  if (peer == rank_ || peer > WorkId::kMaxPeer) {
    return fabric_error(
        absl::StatusCode::kInvalidArgument, place(peer, device),
        ErrorCause::kBadInput,
        absl::StrFormat("peer %u is not another rank (ranks are 0..%u and "
                        "this is rank %u)",
                        peer, WorkId::kMaxPeer, rank_));
  }
  if (devices_->find(device) == nullptr) {
    return fabric_error(
        absl::StatusCode::kNotFound, place(peer, device), ErrorCause::kBadInput,
        absl::StrFormat("no RDMA device of that name; %s lists: %s; check "
                        "the device JSON",
                        library_.path(), devices_->names()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<uint16_t, GidEntry>> VerbsFabric::ready_port(
    const OpenDevice& device, uint32_t peer) const {
  const ErrorPlace where = place(peer, device.place().device);
  absl::StatusOr<abi::ibv_port_attr> port = device.query_port(kPort);
  if (!port.ok()) return port.status();
  if (absl::Status s = OpenDevice::check_port_active(kPort, *port, where);
      !s.ok()) {
    return s;
  }
  const std::vector<GidEntry> table = device.gid_table(kPort, *port);
  std::optional<GidEntry> gid = choose_gid(table);
  if (!gid.has_value()) {
    return fabric_error(
        absl::StatusCode::kFailedPrecondition, where, ErrorCause::kFabric,
        absl::StrFormat("no usable GID on port %u (%u entries read): %s",
                        static_cast<unsigned>(kPort), table.size(),
                        no_usable_gid_remedy()));
  }
  base::log(
      base::LogLevel::kInfo,
      "rank %u, device %s, port %u: GID index %d (%s) %s for peer %u, the "
      "first %s of %u entries",
      rank_, device.place().device, static_cast<unsigned>(kPort), gid->index,
      gid_kind_name(gid->kind), gid_text(gid->gid), peer,
      gid->kind == GidKind::kIpv4Mapped ? "IPv4-mapped entry"
                                        : "usable entry (no IPv4-mapped one)",
      table.size());
  if (gid->kind != GidKind::kIpv4Mapped) {
    base::log(
        base::LogLevel::kWarning,
        "rank %u, device %s: no IPv4-mapped GID, using link-local %s at "
        "index %d; if peers cannot connect, give the Thunderbolt interface "
        "an IPv4 address",
        rank_, device.place().device, gid_text(gid->gid), gid->index);
  }
  return std::make_pair(port->lid, *gid);
}

absl::StatusOr<DeviceDomain*> VerbsFabric::adopt(
    std::unique_ptr<OpenDevice> device) {
  absl::StatusOr<std::unique_ptr<DeviceDomain>> domain =
      DeviceDomain::create(std::move(device), memory_region_budget_);
  if (!domain.ok()) return domain.status();
  for (const auto& slab : slabs_) {
    if (absl::Status s = (*domain)->register_slab(*slab); !s.ok()) return s;
  }
  for (const UserRegion& region : user_regions_) {
    internal::RegistrationCache& cache = (*domain)->regions();
    cache.add_lazy(
        region.slab->id(),
        {region.slab->data(), static_cast<size_t>(region.slab->bytes())});
    for (uint32_t i = 0; i < region.holds; ++i) cache.hold(region.slab->id());
  }
  domains_.push_back(std::move(*domain));
  return domains_.back().get();
}

absl::StatusOr<std::unique_ptr<Endpoint>> VerbsFabric::open(
    std::string_view device, uint32_t peer) {
  if (absl::Status s = check_peer(peer, device); !s.ok()) return s;
  DeviceDomain* domain = find_domain(device);
  std::unique_ptr<OpenDevice> fresh;
  if (domain == nullptr) {
    auto opened = OpenDevice::open(library_, devices_->find(device),
                                   place(kNoPeer, device));
    if (!opened.ok()) return opened.status();
    fresh = std::move(*opened);
  }
  const OpenDevice& opened = domain != nullptr ? domain->device() : *fresh;
  auto port = ready_port(opened, peer);
  if (!port.ok()) return port.status();
  if (domain == nullptr) {
    absl::StatusOr<DeviceDomain*> adopted = adopt(std::move(fresh));
    if (!adopted.ok()) return adopted.status();
    domain = *adopted;
  }
  internal::VerbsEndpoint::Setup setup;
  setup.domain = domain;
  setup.info = EndpointInfo{rank_, peer, std::string(device)};
  setup.lid = port->first;
  setup.gid = port->second;
  setup.cable = cables_opened_[peer]++;
  setup.trace = trace_.get();
  auto endpoint = internal::VerbsEndpoint::create(std::move(setup));
  if (!endpoint.ok()) return endpoint.status();
  return std::unique_ptr<Endpoint>(std::move(*endpoint));
}

}  // namespace weft::verbs
