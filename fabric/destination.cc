#include "fabric/destination.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft {
namespace {
void put_be(uint8_t* out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(value & 0xff);
    value >>= 8;
  }
}
uint64_t get_be(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}
}  // namespace

bool Destination::gid_is_global() const {
  return std::any_of(gid.begin() + 8, gid.end(),
                     [](uint8_t b) { return b != 0; });
}

std::string Destination::gid_string() const {
  const bool v4_mapped =
      std::all_of(gid.begin(), gid.begin() + 10, [](uint8_t b) { return b == 0; }) &&
      gid[10] == 0xff && gid[11] == 0xff;
  if (v4_mapped) {
    return absl::StrFormat("::ffff:%u.%u.%u.%u", gid[12], gid[13], gid[14],
                           gid[15]);
  }
  std::string out;
  for (size_t i = 0; i < gid.size(); i += 2) {
    if (i > 0) out += ':';
    absl::StrAppendFormat(&out, "%02x%02x", gid[i], gid[i + 1]);
  }
  return out;
}

std::string Destination::to_string() const {
  return absl::StrFormat("lid %u qpn %u psn %u gid %s", lid, qp_num, psn,
                         gid_string());
}

std::array<uint8_t, Destination::kWireBytes> Destination::encode() const {
  std::array<uint8_t, kWireBytes> out{};
  put_be(out.data(), lid, 2);
  put_be(out.data() + 2, qp_num, 4);
  put_be(out.data() + 6, psn, 4);
  std::copy(gid.begin(), gid.end(), out.begin() + 10);
  return out;
}

absl::StatusOr<Destination> Destination::decode(std::span<const uint8_t> bytes) {
  if (bytes.size() != kWireBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a destination is %u bytes on the wire, got %u; the peer runs an "
        "incompatible weft version",
        kWireBytes, bytes.size()));
  }
  Destination d;
  d.lid = static_cast<uint16_t>(get_be(bytes.data(), 2));
  d.qp_num = static_cast<uint32_t>(get_be(bytes.data() + 2, 4));
  d.psn = static_cast<uint32_t>(get_be(bytes.data() + 6, 4));
  std::copy(bytes.begin() + 10, bytes.end(), d.gid.begin());
  return d;
}

}  // namespace weft
