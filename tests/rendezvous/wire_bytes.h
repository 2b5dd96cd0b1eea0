// A TCP bootstrap message header written out by hand from the format in
// rendezvous/internal/wire.h (not with its encoder), for tests that check the
// decoder or send a peer raw bytes.
#ifndef WEFT_TESTS_COLLECTIVES_WIRE_BYTES_H_
#define WEFT_TESTS_COLLECTIVES_WIRE_BYTES_H_

#include <cstdint>
#include <vector>

namespace weft::testing {

// "WEFT", then version, type and body length, big-endian.
inline std::vector<uint8_t> wire_header_bytes(uint16_t version, uint16_t type,
                                              uint32_t length) {
  return {0x57,
          0x45,
          0x46,
          0x54,
          uint8_t(version >> 8),
          uint8_t(version),
          uint8_t(type >> 8),
          uint8_t(type),
          uint8_t(length >> 24),
          uint8_t(length >> 16),
          uint8_t(length >> 8),
          uint8_t(length)};
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_WIRE_BYTES_H_
