// Fuzzes the device JSON parser: any bytes must give a Topology or an
// InvalidArgument, never a crash; a parsed topology must round-trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<weft::Topology> topo = weft::Topology::parse_json(text);
  if (!topo.ok()) {
    if (topo.status().code() != absl::StatusCode::kInvalidArgument)
      std::abort();
    return 0;
  }
  absl::StatusOr<weft::Topology> back =
      weft::Topology::parse_json(topo->to_json());
  if (!back.ok() || back->ranks() != topo->ranks()) std::abort();
  for (uint32_t i = 0; i < topo->ranks(); ++i) {
    for (uint32_t j = 0; j < topo->ranks(); ++j) {
      if (back->devices(i, j) != topo->devices(i, j)) std::abort();
    }
  }
  return 0;
}
