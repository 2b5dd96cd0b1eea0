#include "collectives/bootstrap/address.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/bootstrap.h"

namespace weft::collectives::internal {
namespace {

constexpr uint32_t kAddressMagic = 0x41544657;  // "WFTA"
constexpr uint8_t kAddressVersion = 1;
constexpr size_t kFixedBytes = 4 + 1 + 4 + 4 + 8 + 4;
constexpr size_t kLaneBytes = 4 + 4 + Destination::kWireBytes;
constexpr size_t kMaxLanes =
    (Bootstrap::kMaxBlobBytes - kFixedBytes) / kLaneBytes;

void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t get(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += static_cast<size_t>(n);
    return v;
  }
  std::span<const uint8_t> take(size_t n) {
    auto s = bytes_.subspan(at_, n);
    at_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

}  // namespace

std::vector<uint8_t> encode_address(const RankAddress& a) {
  std::vector<uint8_t> out;
  out.reserve(kFixedBytes + a.lanes.size() * kLaneBytes);
  put(out, kAddressMagic, 4);
  put(out, kAddressVersion, 1);
  put(out, a.rank, 4);
  put(out, a.size, 4);
  put(out, a.options_fingerprint, 8);
  put(out, a.lanes.size(), 4);
  for (const LaneAddress& lane : a.lanes) {
    put(out, lane.peer, 4);
    put(out, lane.cable, 4);
    const auto d = lane.destination.encode();
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

absl::StatusOr<RankAddress> decode_address(std::span<const uint8_t> bytes) {
  if (bytes.size() < kFixedBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a group address of %u bytes is shorter than the %u-byte minimum",
        bytes.size(), kFixedBytes));
  }
  Reader r(bytes);
  if (r.get(4) != kAddressMagic || r.get(1) != kAddressVersion) {
    return absl::InvalidArgumentError(
        "a group address has the wrong magic or version; every rank must "
        "run the same weft version");
  }
  RankAddress a;
  a.rank = static_cast<uint32_t>(r.get(4));
  a.size = static_cast<uint32_t>(r.get(4));
  a.options_fingerprint = r.get(8);
  const uint64_t lanes = r.get(4);
  if (lanes > kMaxLanes || bytes.size() != kFixedBytes + lanes * kLaneBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the group address of rank %u announces %u endpoints but has %u "
        "bytes",
        a.rank, lanes, bytes.size()));
  }
  for (uint64_t i = 0; i < lanes; ++i) {
    LaneAddress lane;
    lane.peer = static_cast<uint32_t>(r.get(4));
    lane.cable = static_cast<uint32_t>(r.get(4));
    absl::StatusOr<Destination> d =
        Destination::decode(r.take(Destination::kWireBytes));
    if (!d.ok()) return d.status();
    lane.destination = *d;
    a.lanes.push_back(lane);
  }
  return a;
}

uint64_t options_fingerprint(const GroupOptions& o) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i)
      h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  mix(static_cast<uint64_t>(o.algorithm));
  mix(o.mesh_exchange_max_bytes);
  mix(o.ring_directions);
  mix(o.max_frame_bytes);
  mix(o.depth);
  mix(o.max_slab_bytes);
  mix(o.recovery.enabled ? 1 : 0);  // the two sides must speak alike
  return h;
}

}  // namespace weft::collectives::internal
