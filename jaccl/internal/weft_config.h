// A jaccl::Config's parts as weft's: the rank (text checked), the device
// lists as a weft::Topology, and the topology JACCL would choose.
#ifndef WEFT_JACCL_INTERNAL_WEFT_CONFIG_H_
#define WEFT_JACCL_INTERNAL_WEFT_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/topology.h"
#include "jaccl/jaccl.h"

namespace jaccl::internal {

using Devices = std::vector<std::vector<std::vector<std::string>>>;

// JACCL's choice: the ring when preferred and valid, else the mesh when
// valid, else the ring. REQUIRES: cfg.is_valid().
bool chooses_ring(const Config& cfg);

// Why a Config with these devices (read from `source`), which is not valid
// (Config::is_valid), is refused: the devices' first finding of
// weft::check_topology for a mesh or a ring (the one line every reader of a
// device file gives), or JACCL's own words when weft's check finds nothing
// (fewer than two ranks, a ring whose pairs have different cable counts).
std::string invalid_cabling(const Devices& devices, std::string_view source);

// The rank set as text (`text`, checked: a plain decimal number) or as a
// number (`rank`, checked: not negative). Throws std::runtime_error naming
// what was given.
uint32_t checked_rank(const std::optional<std::string>& text, int rank);

// JACCL's devices[i][j] lists through the device JSON both read, so weft's
// checks (names, the diagonal) apply. Throws std::runtime_error saying
// what is wrong.
weft::Topology to_topology(const Devices& devices);

}  // namespace jaccl::internal

#endif  // WEFT_JACCL_INTERNAL_WEFT_CONFIG_H_
