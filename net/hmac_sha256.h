// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written out in weft so
// proving a shared secret needs no cryptography library, plus a comparison
// whose time does not depend on where two digests differ. Used by
// net/secret_proof.h; not a general-purpose cryptography API (no
// streaming interface, no other hashes).
#ifndef WEFT_NET_HMAC_SHA256_H_
#define WEFT_NET_HMAC_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace weft::net {

inline constexpr size_t kSha256Bytes = 32;
using Sha256Digest = std::array<uint8_t, kSha256Bytes>;

Sha256Digest sha256(std::span<const uint8_t> message);

// HMAC-SHA-256 of `message` under `key`; a key longer than SHA-256's
// 64-byte block is hashed first, as RFC 2104 says.
Sha256Digest hmac_sha256(std::span<const uint8_t> key,
                         std::span<const uint8_t> message);

// true when `a` and `b` hold the same bytes. For equal lengths it reads
// every byte whatever the contents, so a peer timing refusals learns
// nothing about how much of a forged proof was right.
bool equal_in_constant_time(std::span<const uint8_t> a,
                            std::span<const uint8_t> b);

}  // namespace weft::net

#endif  // WEFT_NET_HMAC_SHA256_H_
