// Devices and contexts: the world built from the environment, the control
// calls of sim_verbs.h, device lists, GUIDs, opening and closing, and what
// ibv_query_device, ibv_query_port, ibv_query_gid(_type) report.
#include "sim_verbs/provider.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "sim_server/departures.h"
#include "sim_verbs/ops.h"

namespace weft::sim_verbs {
namespace {

// Limits ibv_query_device reports when Apple's are not applied.
constexpr int kMaxQps = 1024;
constexpr int kMaxMrs = 4096;
constexpr int kMaxCqs = 1024;
constexpr int kMaxPds = 1024;
// A device's node GUID: the company id 02:00:5e (locally administered),
// then the rank and the device's index among the rank's devices, plus one:
// 02:00:5e:00:00:<rank, 16 bits>:<index + 1, 16 bits>.
constexpr uint32_t kCompanyId = 0x02005e;
constexpr uint64_t kGuidPrefix = uint64_t{kCompanyId} << 40;
constexpr int kGuidRankShift = 16;
// What the port reports for its link, as an InfiniBand port would: width 8x
// (code 4) at 10 Gb/s per lane (code 4, QDR) is Thunderbolt 5's 80 Gb/s.
constexpr uint8_t kActiveWidth8x = 4;
constexpr uint8_t kActiveSpeed10Gbps = 4;
constexpr uint8_t kPhysStateDisabled = 3;
constexpr uint8_t kPhysStateLinkUp = 5;
constexpr uint8_t kVirtualLanes1 = 1;  // max_vl_num code for one lane
// Page sizes memory regions may use: 4 KiB and every larger power of two.
constexpr uint64_t kPageSizeCap = ~uint64_t{0xfff};
// Where the second link-local GID of a port differs from the first.
constexpr size_t kSecondInterfaceByte = 9;

GidBytes ipv4_gid(uint32_t rank, uint32_t index) {
  GidBytes g{};
  g[10] = 0xff;
  g[11] = 0xff;
  g[12] = 169;
  g[13] = 254;
  g[14] = static_cast<uint8_t>(rank);
  g[15] = static_cast<uint8_t>(index + 1);
  return g;
}

GidBytes link_local_gid(uint32_t rank, uint32_t index) {
  GidBytes g{};
  g[0] = 0xfe;
  g[1] = 0x80;
  g[8] = 0x02;  // a locally administered interface id
  g[13] = static_cast<uint8_t>(rank);
  g[15] = static_cast<uint8_t>(index + 1);
  return g;
}

std::vector<GidBytes> gid_table(const Config& config, uint32_t rank,
                                uint32_t index) {
  constexpr size_t kMinTable = 2;
  std::vector<GidBytes> table(kMinTable);
  switch (config.gid_mode) {
    case GidMode::kEmpty:
      break;
    case GidMode::kLinkLocal:
      // As Apple's ports before the interface has an IPv4 address: two
      // link-local entries (MLX #3467).
      table[0] = link_local_gid(rank, index);
      table[1] = link_local_gid(rank, index);
      table[1][kSecondInterfaceByte] = 1;
      break;
    case GidMode::kIpv4At: {
      const uint32_t at = config.ipv4_gid_index;
      table.resize(std::max<size_t>(kMinTable, at + 1));
      table[at == 0 ? 1 : 0] = link_local_gid(rank, index);
      table[at] = ipv4_gid(rank, index);
      break;
    }
  }
  return table;
}

}  // namespace

Provider& Provider::instance() {
  static Provider* const provider = new Provider;
  return *provider;
}

bool Provider::ensure_world() {
  if (world_ != nullptr || remote_ != nullptr) return true;
  absl::StatusOr<Config> config = config_from_environment();
  absl::Status status = config.status();
  const char* server = std::getenv(sim_server::kServerVariable);
  if (status.ok() && server != nullptr && *server != '\0') {
    status = connect_to_server(&*config);
  } else if (status.ok()) {
    sim::WorldOptions options;
    options.topology = config->topology;
    options.link = config->link;
    options.faults = config->faults;
    options.seed = config->seed;
    options.keep_trace_events = false;
    absl::StatusOr<std::unique_ptr<sim::World>> world =
        sim::World::create(std::move(options));
    status = world.status();
    if (world.ok()) world_ = *std::move(world);
  }
  if (!status.ok()) {
    last_error_ =
        absl::StrFormat("weft simulated verbs provider: %s", status.message());
    if (!reported_) std::fprintf(stderr, "%s\n", last_error_.c_str());
    reported_ = true;
    return false;
  }
  config_ = *std::move(config);
  current_rank_ = remote_ != nullptr ? remote_->rank() : config_->first_rank;
  last_error_.clear();
  build_devices();
  return true;
}

absl::Status Provider::connect_to_server(Config* config) {
  absl::StatusOr<uint32_t> rank = sim_server::rank_from_environment();
  if (!rank.ok()) return rank.status();
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
  if (const char* s = std::getenv("WEFT_SIM_WAIT_TIMEOUT_S")) {
    char* end = nullptr;
    const long seconds = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || seconds < 1 || seconds > 86400) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "WEFT_SIM_WAIT_TIMEOUT_S='%s' is not a number of seconds in "
          "1..86400",
          s));
    }
    timeout = std::chrono::seconds(seconds);
  }
  absl::StatusOr<std::unique_ptr<sim_server::RemoteWorld>> remote =
      sim_server::RemoteWorld::connect(std::getenv(sim_server::kServerVariable),
                                       *rank, timeout);
  if (!remote.ok()) return remote.status();
  remote_ = *std::move(remote);
  wait_timeout_ = timeout;
  // The server's world decides who is cabled to whom and Apple's limits.
  config->topology = remote_->topology();
  config->apple_limits = config->apple_limits || remote_->apple_limits();
  return absl::OkStatus();
}

Fabric& Provider::fabric_of(uint32_t rank) {
  return remote_ != nullptr ? remote_->fabric() : world_->fabric(rank);
}

TimeNs Provider::world_now_ns() const {
  return remote_ != nullptr ? remote_->clock().now_ns()
                            : world_->clock().now_ns();
}

bool Provider::has_local_work() const {
  if (remote_ != nullptr &&
      (remote_->pending_completions() > 0 || remote_->has_writes())) {
    return true;
  }
  for (const auto& [ptr, cq] : cqs_) {
    if (!cq->stash.empty()) return true;
  }
  return false;
}

int Provider::idle(int64_t wake_at_ns) {
  if (!ensure_world()) return EINVAL;
  if (remote_ == nullptr) return 0;
  announces_waits_ = true;
  if (has_local_work()) return 0;
  return wait_at_server(
      "weft (Fabric::idle)",
      wake_at_ns < 0 ? std::nullopt : std::optional<TimeNs>(wake_at_ns));
}

void Provider::build_devices() {
  const Topology& topology = config_->topology;
  for (uint32_t rank = 0; rank < topology.ranks(); ++rank) {
    std::vector<SimDevice*> mine;
    for (uint32_t peer = 0; peer < topology.ranks(); ++peer) {
      for (const std::string& name : topology.devices(rank, peer)) {
        auto same = [&](SimDevice* d) { return d->name == name; };
        auto it = std::find_if(mine.begin(), mine.end(), same);
        if (it != mine.end()) {
          (*it)->peer = kNoPeer;  // one device, several peers
          continue;
        }
        auto device = std::make_unique<SimDevice>();
        std::memset(&device->device, 0, sizeof(device->device));
        device->device.node_type = IBV_NODE_CA;
        device->device.transport_type = IBV_TRANSPORT_IB;
        std::snprintf(device->device.name, sizeof(device->device.name), "%s",
                      name.c_str());
        device->rank = rank;
        device->index = static_cast<uint32_t>(mine.size());
        device->name = name;
        device->peer = peer;
        device->port_down = config_->port_down(name);
        device->gids = gid_table(*config_, rank, device->index);
        mine.push_back(device.get());
        devices_.push_back(std::move(device));
      }
    }
  }
}

int Provider::reset() {
  // Device lists not yet freed still point at this world's devices.
  if (!contexts_.empty() || !lists_.empty()) return EBUSY;
  lists_.clear();
  shadows_.clear();
  spare_shadows_.clear();
  devices_.clear();
  pools_.clear();
  world_.reset();
  remote_.reset();
  announces_waits_ = false;
  config_.reset();
  last_error_.clear();
  reported_ = false;
  teardown_errors_ = 0;
  return 0;
}

int Provider::set_rank(uint32_t rank) {
  if (!ensure_world() || rank >= config_->topology.ranks()) return EINVAL;
  // A process of the server's world is its one rank.
  if (remote_ != nullptr && rank != remote_->rank()) return EINVAL;
  current_rank_ = rank;
  return 0;
}

int Provider::teardown_error(const char* what, const char* why) {
  ++teardown_errors_;
  std::fprintf(stderr, "weft simulated verbs provider: %s while %s (EBUSY)\n",
               what, why);
  return EBUSY;
}

ibv_device** Provider::get_device_list(int* num_devices) {
  if (num_devices != nullptr) *num_devices = 0;
  if (!ensure_world()) {
    errno = EINVAL;
    return nullptr;
  }
  std::vector<ibv_device*> mine;
  for (const auto& device : devices_) {
    if (device->rank == current_rank_) mine.push_back(&device->device);
  }
  auto list = std::make_unique<ibv_device*[]>(mine.size() + 1);
  std::copy(mine.begin(), mine.end(), list.get());
  list[mine.size()] = nullptr;
  ibv_device** out = list.get();
  lists_.emplace(out, std::move(list));
  if (num_devices != nullptr) *num_devices = static_cast<int>(mine.size());
  return out;
}

void Provider::free_device_list(ibv_device** list) { lists_.erase(list); }

SimDevice* Provider::find_device(const ibv_device* device) const {
  for (const auto& d : devices_) {
    if (&d->device == device) return d.get();
  }
  return nullptr;
}

const char* Provider::device_name(ibv_device* device) {
  const SimDevice* d = find_device(device);
  return d == nullptr ? nullptr : d->device.name;
}

uint64_t Provider::device_guid(ibv_device* device) {
  const SimDevice* d = find_device(device);
  if (d == nullptr) return 0;
  const uint64_t guid =
      kGuidPrefix | (uint64_t{d->rank} << kGuidRankShift) | (d->index + 1);
  uint8_t bytes[sizeof(guid)];
  for (size_t i = 0; i < sizeof(guid); ++i) {
    bytes[i] = static_cast<uint8_t>(guid >> (8 * (sizeof(guid) - 1 - i)));
  }
  uint64_t big_endian = 0;
  std::memcpy(&big_endian, bytes, sizeof(big_endian));
  return big_endian;
}

ibv_context* Provider::open_device(ibv_device* device) {
  SimDevice* d = find_device(device);
  if (d == nullptr) {
    errno = ENODEV;
    return nullptr;
  }
  auto context = std::make_unique<SimContext>();
  std::memset(&context->context, 0, sizeof(context->context));
  context->context.device = device;
  context->context.cmd_fd = -1;
  context->context.async_fd = -1;
  context->context.num_comp_vectors = 1;
  pthread_mutex_init(&context->context.mutex, nullptr);
  context->context.abi_compat = nullptr;  // not an extended context
  fill_operations(&context->context.ops);
  context->handle = next_handle_++;
  context->device = d;
  ibv_context* out = &context->context;
  contexts_.emplace(out, std::move(context));
  return out;
}

SimContext* Provider::find_context(const ibv_context* context) const {
  auto it = contexts_.find(context);
  return it == contexts_.end() ? nullptr : it->second.get();
}

int Provider::close_device(ibv_context* context) {
  SimContext* c = find_context(context);
  if (c == nullptr) return EINVAL;
  for (const auto& [ptr, pd] : pds_) {
    if (pd->owner == c) return teardown_error("ibv_close_device");
  }
  for (const auto& [ptr, cq] : cqs_) {
    if (cq->owner == c) return teardown_error("ibv_close_device");
  }
  for (const auto& [ptr, channel] : channels_) {
    if (channel->owner == c) return teardown_error("ibv_close_device");
  }
  pthread_mutex_destroy(&c->context.mutex);
  contexts_.erase(context);
  return 0;
}

int Provider::query_device(ibv_context* context, ibv_device_attr* attr) {
  const SimContext* c = find_context(context);
  if (c == nullptr || attr == nullptr) return EINVAL;
  const bool apple = config_->apple_limits;
  std::memset(attr, 0, sizeof(*attr));
  std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s",
                WEFT_SIM_VERBS_FW_VER);
  attr->node_guid = device_guid(context->device);
  attr->sys_image_guid = attr->node_guid;  // one device per "adapter"
  attr->max_mr_size = UINT64_MAX;
  attr->page_size_cap = kPageSizeCap;
  attr->vendor_id = kCompanyId;
  attr->max_qp = apple ? static_cast<int>(kAppleQpsPerDevice) : kMaxQps;
  attr->max_qp_wr = static_cast<int>(depth_limit(kMaxQueueDepth));
  attr->max_sge = kMaxSge;
  attr->max_cq = kMaxCqs;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = apple ? static_cast<int>(kAppleMrsPerDevice) : kMaxMrs;
  attr->max_pd = kMaxPds;
  // No RDMA read, atomics, shared receive queues, address handles or
  // multicast: UC queue pairs only.
  attr->atomic_cap = IBV_ATOMIC_NONE;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  return 0;
}

int Provider::query_port(ibv_context* context, uint8_t port,
                         ibv_port_attr* attr) {
  const SimContext* c = find_context(context);
  if (c == nullptr || attr == nullptr || port != kPort) return EINVAL;
  // As rdma-core's exported ibv_query_port: every field up to and including
  // `flags` (the caller may have passed the shorter compat structure).
  std::memset(attr, 0, offsetof(ibv_port_attr, port_cap_flags2));
  const bool down = c->device->port_down;
  attr->state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->max_mtu = kMaxMtu;
  attr->active_mtu = kActiveMtu;
  attr->gid_tbl_len = static_cast<int>(c->device->gids.size());
  // A RoCE port: GIDs from IP addresses, no LID, no subnet manager.
  attr->port_cap_flags = IBV_PORT_IP_BASED_GIDS;
  attr->max_msg_sz = static_cast<uint32_t>(kMaxMessageBytes);
  attr->pkey_tbl_len = 1;
  attr->lid = 0;
  attr->max_vl_num = kVirtualLanes1;
  attr->active_width = kActiveWidth8x;
  attr->active_speed = kActiveSpeed10Gbps;
  attr->phys_state = down ? kPhysStateDisabled : kPhysStateLinkUp;
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

int Provider::query_gid(ibv_context* context, uint8_t port, int index,
                        ibv_gid* gid) {
  const SimContext* c = find_context(context);
  if (c == nullptr || gid == nullptr || port != kPort || index < 0 ||
      static_cast<size_t>(index) >= c->device->gids.size()) {
    errno = EINVAL;
    return -1;  // as rdma-core's ibv_query_gid
  }
  std::memcpy(gid->raw, c->device->gids[static_cast<size_t>(index)].data(),
              sizeof(gid->raw));
  return 0;
}

int Provider::query_gid_type(ibv_context* context, uint8_t port,
                             unsigned int index, int* type) {
  const SimContext* c = find_context(context);
  if (c == nullptr || type == nullptr || port != kPort ||
      index >= c->device->gids.size()) {
    errno = EINVAL;
    return -1;  // as rdma-core's ibv_query_gid_type
  }
  // Every GID of a simulated port is a RoCE v2 one (routable, UDP); an
  // unused entry reads as IB/RoCE v1, as rdma-core reports an empty GID.
  constexpr int kIbRoceV1 = 0;
  constexpr int kRoceV2 = 1;
  const GidBytes& gid = c->device->gids[index];
  const bool empty =
      std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
  *type = empty ? kIbRoceV1 : kRoceV2;
  return 0;
}

int Provider::live(std::string_view kind, uint32_t rank, const char* device) {
  if (kind == "teardown_errors") return teardown_errors_;
  if (!ensure_world()) return -1;
  if (kind == "shadows") {
    int n = 0;
    for (const auto& [key, shadow] : shadows_) n += std::get<0>(key) == rank;
    auto spare = spare_shadows_.find(rank);
    if (spare != spare_shadows_.end())
      n += static_cast<int>(spare->second.size());
    return n;
  }
  int total = 0;
  for (const auto& d : devices_) {
    if (d->rank != rank || (device != nullptr && d->name != device)) continue;
    const int n = count_on(*d, kind);
    if (n < 0) return -1;
    total += n;
  }
  return total;
}

int Provider::count_on(const SimDevice& device, std::string_view kind) const {
  auto on = [&](const SimContext* c) { return c->device == &device; };
  int n = 0;
  if (kind == "contexts") {
    for (const auto& [p, c] : contexts_) n += on(c.get());
  } else if (kind == "pds") {
    for (const auto& [p, pd] : pds_) n += on(pd->owner);
  } else if (kind == "mrs") {
    for (const auto& [p, mr] : mrs_) n += on(mr->owner->owner);
  } else if (kind == "cqs") {
    for (const auto& [p, cq] : cqs_) n += on(cq->owner);
  } else if (kind == "qps") {
    for (const auto& [p, qp] : qps_) n += on(qp->owner->owner);
  } else if (kind == "channels") {
    for (const auto& [p, ch] : channels_) n += on(ch->owner);
  } else {
    return -1;
  }
  return n;
}

int Provider::qp_sgid_index(uint32_t qp_num) const {
  auto it = qps_by_num_.find(qp_num);
  return it == qps_by_num_.end() ? -1 : it->second->sgid_index;
}

int64_t Provider::now_ns() { return ensure_world() ? world_now_ns() : -1; }

int Provider::crashed(uint32_t rank) {
  if (!ensure_world() || rank >= config_->topology.ranks()) return -1;
  if (remote_ != nullptr) {
    absl::StatusOr<bool> crashed = remote_->crashed(rank);
    return crashed.ok() ? (*crashed ? 1 : 0) : -1;
  }
  return world_->crashed(rank) ? 1 : 0;
}

int Provider::departed(uint32_t* ranks, int64_t* left_at_ns, int capacity) {
  // In one process every rank stays for the world's life: the caller
  // must learn of departures some other way.
  if (!ensure_world() || capacity < 0 || remote_ == nullptr) return -1;
  const std::vector<sim_server::Departure> gone = remote_->departed();
  const size_t n = std::min(gone.size(), static_cast<size_t>(capacity));
  for (size_t i = 0; i < n; ++i) {
    if (ranks != nullptr) ranks[i] = gone[i].rank;
    if (left_at_ns != nullptr) left_at_ns[i] = gone[i].left_at_ns;
  }
  return static_cast<int>(gone.size());
}

uint64_t Provider::trace_hash() {
  if (!ensure_world()) return 0;
  if (remote_ != nullptr) {
    absl::StatusOr<uint64_t> hash = remote_->trace_hash();
    return hash.ok() ? *hash : 0;
  }
  return world_->trace().hash();
}

}  // namespace weft::sim_verbs
