#include "harness/reference.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "harness/plain_arithmetic.h"

namespace weft::harness {
namespace {

// Elements handled per pass, so the scratch stays in cache.
constexpr uint64_t kChunkElements = uint64_t{1} << 14;
// Most ranks contributing to one float element (see reference.h).
constexpr uint32_t kMaxContributors = 8;
constexpr float kDyadic[] = {-2.0f, -1.0f, -0.5f, 0.5f, 1.0f, 2.0f};
constexpr float kPositive[] = {0.5f, 1.0f, 2.0f};
constexpr uint64_t kRankSpread = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kSeedSpread = 0xd1b54a32d192ed03ull;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A cheap per-element hash: the data need variety, not statistical quality.
uint64_t element_hash(uint64_t base, uint64_t index) {
  const uint64_t x = (base ^ index) * kRankSpread;
  return x ^ (x >> 29);
}

// An index into a table of `size` entries from the hash's high bits.
size_t pick(uint64_t h, size_t size) { return (h >> 32) % size; }

struct Complex {
  float re;
  float im;
};

// Writes `count` elements of type T from element `first` on; `value(h,
// active)` gives one element from its hash (`active` false: the element
// takes no part in a float sum or product, see reference.h).
template <typename T, typename ValueFn>
void generate(uint64_t base, uint32_t rank, uint32_t stride, uint64_t first,
              uint64_t count, std::byte* out, ValueFn value) {
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t i = first + j;
    const bool active = stride == 1 || (i + rank) % stride == 0;
    const T v = value(element_hash(base, i), active);
    std::memcpy(out + j * sizeof(T), &v, sizeof(T));
  }
}

// 16-bit floats: the dyadic values and the identity, converted once.
template <uint16_t (*Convert)(float)>
void generate_halves(uint64_t base, uint32_t rank, uint32_t stride,
                     uint64_t first, uint64_t count, std::byte* out,
                     float identity) {
  uint16_t table[std::size(kDyadic)];
  for (size_t k = 0; k < std::size(kDyadic); ++k)
    table[k] = Convert(kDyadic[k]);
  const uint16_t none = Convert(identity);
  generate<uint16_t>(base, rank, stride, first, count, out,
                     [&](uint64_t h, bool active) {
                       return active ? table[pick(h, std::size(table))] : none;
                     });
}

template <typename T>
void generate_integers(uint64_t base, uint32_t rank, uint64_t first,
                       uint64_t count, std::byte* out) {
  generate<T>(base, rank, 1, first, count, out,
              [](uint64_t h, bool) { return static_cast<T>(h); });
}

}  // namespace

Reference::Reference(const CollectiveSpec& spec, const CollectiveShape& shape,
                     uint32_t ranks, uint64_t seed,
                     std::vector<std::byte> recycled)
    : spec_(spec),
      shape_(shape),
      ranks_(ranks),
      seed_(seed),
      elem_(dtype_size(spec.dtype)),
      stride_(1),
      reduced_(std::move(recycled)) {
  reduced_.clear();
  const bool sums_or_products =
      spec.op == ReduceOp::kSum || spec.op == ReduceOp::kProd;
  if (reduces(spec.kind) && sums_or_products) {
    stride_ = (ranks + kMaxContributors - 1) / kMaxContributors;
  }
}

void Reference::input(uint32_t rank, uint64_t first, uint64_t count,
                      std::byte* out) const {
  const uint64_t base = mix(seed_ * kSeedSpread + rank * kRankSpread);
  const bool prod = spec_.op == ReduceOp::kProd;
  const float identity = prod ? 1.0f : 0.0f;
  const auto dyadic = [&](uint64_t h, bool active) {
    return active ? kDyadic[pick(h, std::size(kDyadic))] : identity;
  };
  const uint32_t s = stride_;
  switch (spec_.dtype) {
    case DType::kBool:
      return generate<uint8_t>(
          base, rank, 1, first, count, out,
          [](uint64_t h, bool) { return static_cast<uint8_t>(h & 1); });
    case DType::kInt8:
    case DType::kUint8:
      return generate_integers<uint8_t>(base, rank, first, count, out);
    case DType::kInt16:
    case DType::kUint16:
      return generate_integers<uint16_t>(base, rank, first, count, out);
    case DType::kInt32:
    case DType::kUint32:
      return generate_integers<uint32_t>(base, rank, first, count, out);
    case DType::kInt64:
    case DType::kUint64:
      return generate_integers<uint64_t>(base, rank, first, count, out);
    case DType::kFloat16:
      return generate_halves<float_to_half>(base, rank, s, first, count, out,
                                            identity);
    case DType::kBFloat16:
      return generate_halves<float_to_bfloat16>(base, rank, s, first, count,
                                                out, identity);
    case DType::kFloat32:
      return generate<float>(base, rank, s, first, count, out, dyadic);
    case DType::kFloat64:
      return generate<double>(
          base, rank, s, first, count, out,
          [&](uint64_t h, bool active) { return double{dyadic(h, active)}; });
    case DType::kComplex64:
      return generate<Complex>(
          base, rank, s, first, count, out, [&](uint64_t h, bool active) {
            if (prod) {  // positive reals: no order-dependent signed zeros
              return Complex{
                  active ? kPositive[pick(h, std::size(kPositive))] : 1.0f,
                  0.0f};
            }
            const float d = dyadic(h, active);
            return (h & 1) ? Complex{d, 0.0f} : Complex{0.0f, d};
          });
  }
}

void Reference::fill_input(uint32_t rank, std::span<std::byte> in) const {
  input(rank, 0, in.size() / elem_, in.data());
}

const std::vector<std::byte>& Reference::reduced() {
  if (have_reduced_) return reduced_;
  const uint64_t total = shape_.in_bytes / elem_;
  const std::byte* const before = reduced_.data();
  reduced_.resize(total * elem_);
  allocated_ = reduced_.data() != before;
  std::vector<std::byte> scratch(kChunkElements * elem_);
  for (uint64_t first = 0; first < total; first += kChunkElements) {
    const uint64_t n = std::min(kChunkElements, total - first);
    std::byte* acc = reduced_.data() + first * elem_;
    input(0, first, n, acc);
    for (uint32_t k = 1; k < ranks_; ++k) {
      input(k, first, n, scratch.data());
      plain_reduce(spec_.dtype, spec_.op, acc, scratch.data(), n);
    }
  }
  have_reduced_ = true;
  return reduced_;
}

void Reference::expected(uint32_t rank, uint64_t first, uint64_t count,
                         std::byte* out) {
  const uint64_t block = shape_.block_bytes / elem_;
  switch (spec_.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
    case CollectiveKind::kReduceScatter: {
      const uint64_t offset =
          spec_.kind == CollectiveKind::kReduceScatter ? rank * block : 0;
      std::memcpy(out, reduced().data() + (offset + first) * elem_,
                  count * elem_);
      return;
    }
    case CollectiveKind::kBroadcast:
      return input(spec_.root, first, count, out);
    case CollectiveKind::kSendRecv:
      return input((rank + ranks_ - 1) % ranks_, first, count, out);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:
      // Block k of the output comes from rank k: its whole input (gather)
      // or its block `rank` (all-to-all).
      while (count > 0) {
        const auto k = static_cast<uint32_t>(first / block);
        const uint64_t at = first % block;
        const uint64_t n = std::min(count, block - at);
        const uint64_t from =
            spec_.kind == CollectiveKind::kAllToAll ? rank * block : 0;
        input(k, from + at, n, out);
        first += n;
        count -= n;
        out += n * elem_;
      }
      return;
    case CollectiveKind::kBarrier:
      return;
  }
}

std::vector<std::byte> Reference::release_reduced() {
  have_reduced_ = false;
  return std::move(reduced_);
}

uint64_t Reference::wrong_elements(uint32_t rank,
                                   std::span<const std::byte> out) {
  const uint64_t want_bytes = out_bytes_of(spec_, shape_, rank);
  const uint64_t total = want_bytes / elem_;
  if (out.size() != want_bytes) return std::max<uint64_t>(total, 1);
  std::vector<std::byte> want(kChunkElements * elem_);
  uint64_t wrong = 0;
  for (uint64_t first = 0; first < total; first += kChunkElements) {
    const uint64_t n = std::min(kChunkElements, total - first);
    expected(rank, first, n, want.data());
    const std::byte* got = out.data() + first * elem_;
    if (std::memcmp(got, want.data(), n * elem_) == 0) continue;
    for (uint64_t i = 0; i < n; ++i) {
      wrong +=
          std::memcmp(got + i * elem_, want.data() + i * elem_, elem_) != 0;
    }
  }
  return wrong;
}

}  // namespace weft::harness
