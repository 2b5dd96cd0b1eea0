// GIDs (the 16-byte addresses of RDMA ports) and which one weft uses. Apple's
// Thunderbolt ports publish an IPv4-mapped GID (::ffff:a.b.c.d) only once the
// interface has an IPv4 address; until then the table may hold only
// link-local fe80:: entries, or nothing. weft prefers IPv4-mapped, falls back
// to link-local, and connects with sgid_index = the index where its own GID
// was found (MLX hard-codes 1, which breaks when the table is ordered
// differently).
#ifndef WEFT_VERBS_GID_H_
#define WEFT_VERBS_GID_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace weft::verbs {

using Gid = std::array<uint8_t, 16>;

enum class GidKind : uint8_t {
  kEmpty,       // all zero: an unused table entry
  kIpv4Mapped,  // ::ffff:a.b.c.d
  kLinkLocal,   // fe80::/10
  kOther,       // any other address
};

GidKind gid_kind(const Gid& gid);
// "empty", "IPv4-mapped", "link-local", "other".
std::string_view gid_kind_name(GidKind kind);
// "::ffff:169.254.3.1" for IPv4-mapped GIDs, eight hex groups otherwise.
std::string gid_text(const Gid& gid);
// "169.254.3.1". REQUIRES: gid_kind(gid) == GidKind::kIpv4Mapped.
std::string gid_ipv4_text(const Gid& gid);

// One entry of a port's GID table.
struct GidEntry {
  int index = 0;
  Gid gid{};
  GidKind kind = GidKind::kEmpty;
};

// The entry weft connects with: the first IPv4-mapped one, else the first
// link-local one; nullopt when there is neither.
std::optional<GidEntry> choose_gid(std::span<const GidEntry> table);

// What to do when choose_gid() finds nothing.
std::string_view no_usable_gid_remedy();

}  // namespace weft::verbs

#endif  // WEFT_VERBS_GID_H_
