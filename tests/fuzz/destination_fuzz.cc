// Fuzzes the destination decoder: bad sizes are errors; good ones
// round-trip bit for bit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "absl/status/statusor.h"
#include "fabric/destination.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<weft::Destination> d =
      weft::Destination::decode(std::span<const uint8_t>(data, size));
  if (!d.ok()) {
    if (size == weft::Destination::kWireBytes) std::abort();
    return 0;
  }
  const auto wire = d->encode();
  if (size != wire.size() || std::memcmp(wire.data(), data, size) != 0)
    std::abort();
  return 0;
}
