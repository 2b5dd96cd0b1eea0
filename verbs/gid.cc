#include "verbs/gid.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "fabric/destination.h"

namespace weft::verbs {
namespace {
constexpr size_t kV4PrefixZeros = 10;  // ::ffff:a.b.c.d has 10 zero bytes
constexpr uint8_t kMappedMarker = 0xff;
constexpr size_t kV4Offset = 12;
constexpr uint8_t kLinkLocalByte0 = 0xfe;
constexpr uint8_t kLinkLocalByte1Mask = 0xc0;  // fe80::/10
constexpr uint8_t kLinkLocalByte1 = 0x80;
}  // namespace

GidKind gid_kind(const Gid& gid) {
  if (std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; })) {
    return GidKind::kEmpty;
  }
  const bool zeros = std::all_of(gid.begin(), gid.begin() + kV4PrefixZeros,
                                 [](uint8_t b) { return b == 0; });
  if (zeros && gid[kV4PrefixZeros] == kMappedMarker &&
      gid[kV4PrefixZeros + 1] == kMappedMarker) {
    return GidKind::kIpv4Mapped;
  }
  if (gid[0] == kLinkLocalByte0 &&
      (gid[1] & kLinkLocalByte1Mask) == kLinkLocalByte1) {
    return GidKind::kLinkLocal;
  }
  return GidKind::kOther;
}

std::string_view gid_kind_name(GidKind kind) {
  switch (kind) {
    case GidKind::kEmpty:
      return "empty";
    case GidKind::kIpv4Mapped:
      return "IPv4-mapped";
    case GidKind::kLinkLocal:
      return "link-local";
    case GidKind::kOther:
      return "other";
  }
  return "other";
}

std::string gid_text(const Gid& gid) {
  Destination d;
  d.gid = gid;
  return d.gid_string();
}

std::string gid_ipv4_text(const Gid& gid) {
  return absl::StrFormat("%u.%u.%u.%u", gid[kV4Offset], gid[kV4Offset + 1],
                         gid[kV4Offset + 2], gid[kV4Offset + 3]);
}

std::optional<GidEntry> choose_gid(std::span<const GidEntry> table) {
  for (GidKind wanted : {GidKind::kIpv4Mapped, GidKind::kLinkLocal}) {
    for (const GidEntry& entry : table) {
      if (entry.kind == wanted) return entry;
    }
  }
  return std::nullopt;
}

std::string_view no_usable_gid_remedy() {
  return "the port's GID table has neither an IPv4-mapped nor a link-local "
         "entry; give the Thunderbolt interface an IPv4 address, e.g. `sudo "
         "ifconfig enX inet 169.254.x.y netmask 255.255.0.0` (enX: the "
         "interface behind this RDMA device, see `weft-devices`)";
}

}  // namespace weft::verbs
