#include "net/hmac_sha256.h"

#include <cstring>
#include <initializer_list>

namespace weft::net {
namespace {

constexpr size_t kBlockBytes = 64;

// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of
// the cube roots of the first 64 primes.
constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// FIPS 180-4 section 5.3.3: the initial hash value.
constexpr std::array<uint32_t, 8> kInitialState = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

// FIPS 180-4 section 6.2.2: one 64-byte block into the state.
void compress(std::array<uint32_t, 8>& state, const uint8_t* block) {
  std::array<uint32_t, 64> w;
  for (int t = 0; t < 16; ++t) {
    w[t] = (uint32_t{block[4 * t]} << 24) | (uint32_t{block[4 * t + 1]} << 16) |
           (uint32_t{block[4 * t + 2]} << 8) | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 =
        rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 =
        rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + sum1 + choose + kRoundConstants[t] + w[t];
    const uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = sum0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const uint32_t next[] = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i) state[i] += next[i];
}

// SHA-256 over the concatenation of `parts` (HMAC hashes a padded key and
// a message without joining them first).
Sha256Digest sha256_of(std::initializer_list<std::span<const uint8_t>> parts) {
  std::array<uint32_t, 8> state = kInitialState;
  std::array<uint8_t, kBlockBytes> block{};
  size_t filled = 0;
  uint64_t total_bytes = 0;
  for (std::span<const uint8_t> part : parts) {
    total_bytes += part.size();
    for (uint8_t byte : part) {
      block[filled++] = byte;
      if (filled == kBlockBytes) {
        compress(state, block.data());
        filled = 0;
      }
    }
  }
  // Padding (section 5.1.1): a one bit, zeros, the length in bits.
  block[filled++] = 0x80;
  if (filled > kBlockBytes - 8) {
    std::memset(block.data() + filled, 0, kBlockBytes - filled);
    compress(state, block.data());
    filled = 0;
  }
  std::memset(block.data() + filled, 0, kBlockBytes - 8 - filled);
  const uint64_t total_bits = total_bytes * 8;
  for (int i = 0; i < 8; ++i) {
    block[kBlockBytes - 1 - i] = static_cast<uint8_t>(total_bits >> (8 * i));
  }
  compress(state, block.data());
  Sha256Digest digest;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<uint8_t>(state[i] >> (24 - 8 * j));
    }
  }
  return digest;
}

}  // namespace

Sha256Digest sha256(std::span<const uint8_t> message) {
  return sha256_of({message});
}

Sha256Digest hmac_sha256(std::span<const uint8_t> key,
                         std::span<const uint8_t> message) {
  std::array<uint8_t, kBlockBytes> padded{};
  if (key.size() > kBlockBytes) {
    const Sha256Digest hashed = sha256(key);
    std::memcpy(padded.data(), hashed.data(), hashed.size());
  } else if (!key.empty()) {
    std::memcpy(padded.data(), key.data(), key.size());
  }
  std::array<uint8_t, kBlockBytes> inner_pad, outer_pad;
  for (size_t i = 0; i < kBlockBytes; ++i) {
    inner_pad[i] = padded[i] ^ 0x36;
    outer_pad[i] = padded[i] ^ 0x5c;
  }
  const Sha256Digest inner = sha256_of({inner_pad, message});
  return sha256_of({outer_pad, inner});
}

bool equal_in_constant_time(std::span<const uint8_t> a,
                            std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  // No early exit: every byte is read whatever the first difference.
  uint8_t differences = 0;
  for (size_t i = 0; i < a.size(); ++i) differences |= a[i] ^ b[i];
  return differences == 0;
}

}  // namespace weft::net
