// jaccl/rdma.h: what JACCL's jaccl.h exposes of its rdma.h: the all-gather
// function a program may hand to Config for the side channel (the exchange
// of connection details before the group forms), and the side channel built
// on it. JACCL's queue-pair, buffer and verbs wrappers are not part of this
// header: weft's verbs fabric takes their place (docs/jaccl.md).
//
// Where <infiniband/verbs.h> exists (every macOS 26.2+ SDK, where JACCL
// builds; Linux with rdma-core's libibverbs-dev) it is included, as JACCL's
// rdma.h includes it, so programs that use verbs types through jaccl.h keep
// building. weft itself never needs it.
#ifndef WEFT_JACCL_RDMA_H_
#define WEFT_JACCL_RDMA_H_

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#endif

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace jaccl {

namespace detail {
// A type with value_type and iterator: gathered element by element.
template <typename T, typename = void>
struct IsContainer : std::false_type {};
template <typename T>
struct IsContainer<T, std::void_t<typename T::value_type, typename T::iterator>>
    : std::true_type {};
}  // namespace detail

// Every rank passes n_bytes at src; afterwards dst (size * n_bytes) holds
// rank r's bytes at dst + r * n_bytes. Must block until every rank has
// contributed, and be called by every rank in the same order.
using AllGatherFn =
    std::function<void(const char* src, char* dst, size_t n_bytes)>;

// An all-gather of values (scalars, or containers such as std::string and
// std::vector of scalars) over an AllGatherFn.
class SideChannel {
 public:
  SideChannel(int rank, int size, AllGatherFn agf)
      : rank_(rank), size_(size), all_gather_fn_(std::move(agf)) {}
  SideChannel(SideChannel&&) = default;
  SideChannel(const SideChannel&) = delete;
  SideChannel& operator=(const SideChannel&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every rank's `v`, indexed by rank.
  template <typename T>
  std::vector<T> all_gather(const T& v) {
    std::vector<T> result(static_cast<size_t>(size_));
    if constexpr (detail::IsContainer<T>::value) {
      using U = typename T::value_type;
      static_assert(std::is_trivially_copyable_v<U>,
                    "SideChannel gathers containers of plain values");
      // Lengths first, so every rank sends the longest length.
      const std::vector<size_t> lengths = all_gather<size_t>(v.size());
      const size_t longest = *std::max_element(lengths.begin(), lengths.end());
      std::vector<U> mine(longest);
      std::copy(v.begin(), v.end(), mine.begin());
      std::vector<U> all(longest * static_cast<size_t>(size_));
      all_gather_fn_(reinterpret_cast<const char*>(mine.data()),
                     reinterpret_cast<char*>(all.data()), longest * sizeof(U));
      for (size_t r = 0; r < result.size(); ++r) {
        auto first = all.begin() + static_cast<std::ptrdiff_t>(r * longest);
        std::copy(first, first + static_cast<std::ptrdiff_t>(lengths[r]),
                  std::inserter(result[r], result[r].end()));
      }
    } else {
      static_assert(std::is_trivially_copyable_v<T>,
                    "SideChannel gathers plain values");
      all_gather_fn_(reinterpret_cast<const char*>(&v),
                     reinterpret_cast<char*>(result.data()), sizeof(T));
    }
    return result;
  }

  // Returns once every rank has called it.
  void barrier() { all_gather<int>(0); }

 private:
  int rank_;
  int size_;
  AllGatherFn all_gather_fn_;
};

}  // namespace jaccl

#endif  // WEFT_JACCL_RDMA_H_
