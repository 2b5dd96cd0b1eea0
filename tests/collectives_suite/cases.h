// Collective test cases: one call of one collective on every rank, with its
// per-rank buffers and the expected output computed from the harness's
// reference (case_inputs.h, never by weft). A case knows how to start
// itself on a rank's Group and how to check that rank's output bit for bit.
#ifndef WEFT_TESTS_COLLECTIVES_SUITE_CASES_H_
#define WEFT_TESTS_COLLECTIVES_SUITE_CASES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "harness/cluster.h"
#include "harness/collective_spec.h"
#include "tests/collectives_suite/case_inputs.h"

namespace weft::testing {

// The harness's kinds; here kSendRecv is one send from `root` to `peer`.
using Kind = harness::CollectiveKind;
// The cluster harness's vocabulary, as the suite's tests name it.
using harness::Cluster;
using harness::ClusterFactory;
using harness::ClusterSpec;
using harness::LinkKind;
using harness::ScriptRun;
using harness::Starter;

struct Case {
  Kind kind = Kind::kAllReduce;
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  // Elements: of the buffer (all-reduce, broadcast, reduce, send/recv), of
  // one rank's block (all-gather, reduce-scatter, all-to-all).
  uint64_t count = 0;
  uint32_t root = 0;  // broadcast, reduce; send/recv: the sender
  uint32_t peer = 1;  // send/recv: the receiver
  bool in_place = false;
  Algorithm algorithm = Algorithm::kAuto;
  bool sensitive = false;  // order-sensitive float inputs
  uint64_t salt = 1;

  std::string name() const {
    return absl::StrFormat(
        "%s %s/%s count=%u root=%u %s %s", harness::collective_name(kind),
        dtype_name(dtype), reduce_op_name(op), count, root,
        in_place ? "in-place" : "out-of-place", algorithm_name(algorithm));
  }
};

inline constexpr std::byte kUnwritten{0xcd};

// One case's buffers on every rank.
class PreparedCase {
 public:
  PreparedCase(const Case& c, uint32_t n)
      : c_(c), n_(n), in_(n), out_(n), expected_(n) {
    const size_t es = dtype_size(c.dtype);
    const bool blocks =
        c.kind == Kind::kReduceScatter || c.kind == Kind::kAllToAll;
    const uint64_t in_count = blocks ? c.count * n : c.count;
    std::vector<ByteVec> inputs;
    if (c.sensitive) {
      for (uint32_t r = 0; r < n; ++r)
        inputs.push_back(sensitive_input(c.dtype, in_count, r, c.salt));
    } else {
      inputs = exact_inputs(c.kind, c.dtype, c.op, in_count, n, c.salt);
    }
    for (uint32_t r = 0; r < n; ++r) layout(r, inputs, es);
  }

  const Case& spec() const { return c_; }

  // Starts the case on `rank`; nullopt when the rank takes no part.
  std::optional<Starter> starter(uint32_t rank) {
    const Case c = c_;
    ConstBytes in = in_view(rank);
    Bytes out = out_view(rank);
    CallOptions call{c.algorithm, 0};
    switch (c.kind) {
      case Kind::kAllReduce:
        return [=](Group& g) {
          return g.all_reduce_async(in, out, c.dtype, c.op, call);
        };
      case Kind::kAllGather:
        return [=](Group& g) {
          return g.all_gather_async(in, out, c.dtype, call);
        };
      case Kind::kReduceScatter:
        return [=](Group& g) {
          return g.reduce_scatter_async(in, out, c.dtype, c.op, call);
        };
      case Kind::kBroadcast:
        return [=](Group& g) {
          return g.broadcast_async(in, out, c.dtype, c.root, call);
        };
      case Kind::kReduce:
        return [=](Group& g) {
          return g.reduce_async(in, out, c.dtype, c.op, c.root, call);
        };
      case Kind::kAllToAll:
        return [=](Group& g) {
          return g.all_to_all_async(in, out, c.dtype, call);
        };
      case Kind::kSendRecv:
        if (rank == c.root)
          return
              [=](Group& g) { return g.send_async(in, c.dtype, c.peer, call); };
        if (rank == c.peer)
          return [=](Group& g) {
            return g.recv_async(out, c.dtype, c.root, call);
          };
        return std::nullopt;
      case Kind::kBarrier:
        return [=](Group& g) { return g.barrier_async(call); };
    }
    return std::nullopt;
  }

  // "" when rank's output is exactly as expected.
  std::string check(uint32_t rank) const {
    const ByteVec& want = expected_[rank];
    const Bytes got = const_cast<PreparedCase*>(this)->out_view(rank);
    if (want.size() != got.size()) {
      return absl::StrFormat("%s rank %u: output has %u bytes, want %u",
                             c_.name(), rank, got.size(), want.size());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] != got[i]) {
        return absl::StrFormat(
            "%s rank %u: byte %u of %u is %02x, want %02x", c_.name(), rank, i,
            want.size(), static_cast<int>(got[i]), static_cast<int>(want[i]));
      }
    }
    return "";
  }
  Bytes output(uint32_t rank) { return out_view(rank); }
  // Rank `rank`'s non-empty buffers (its input, then its output vector),
  // for tests that register them (Group::register_memory).
  std::vector<Bytes> buffers(uint32_t rank) {
    std::vector<Bytes> out;
    for (ByteVec* v : {&in_[rank], &out_[rank]}) {
      if (!v->empty()) out.emplace_back(*v);
    }
    return out;
  }

 private:
  // Sets up rank r's buffers and expected output.
  void layout(uint32_t r, const std::vector<ByteVec>& inputs, size_t es) {
    const Case& c = c_;
    const ByteVec& x = inputs[r];
    const uint64_t block = c.count * es;
    switch (c.kind) {
      case Kind::kAllReduce:
        in_[r] = x;
        out_[r] = c.in_place ? x : ByteVec(x.size(), kUnwritten);
        expected_[r] = reference_reduce(c.dtype, c.op, inputs);
        break;
      case Kind::kAllGather:
        in_[r] = x;
        out_[r] = ByteVec(block * n_, kUnwritten);
        if (c.in_place)
          std::copy(x.begin(), x.end(), out_[r].begin() + r * block);
        for (uint32_t k = 0; k < n_; ++k) {
          expected_[r].insert(expected_[r].end(), inputs[k].begin(),
                              inputs[k].end());
        }
        break;
      case Kind::kReduceScatter: {
        in_[r] = x;
        out_[r] = ByteVec(block, kUnwritten);
        const ByteVec all = reference_reduce(c.dtype, c.op, inputs);
        expected_[r].assign(all.begin() + r * block,
                            all.begin() + (r + 1) * block);
        break;
      }
      case Kind::kBroadcast:
        in_[r] = x;
        out_[r] = c.in_place && r == c.root ? x : ByteVec(x.size(), kUnwritten);
        expected_[r] = inputs[c.root];
        break;
      case Kind::kReduce:
        in_[r] = x;
        out_[r] = r != c.root  ? ByteVec{}
                  : c.in_place ? x
                               : ByteVec(x.size(), kUnwritten);
        if (r == c.root) expected_[r] = reference_reduce(c.dtype, c.op, inputs);
        break;
      case Kind::kAllToAll:
        in_[r] = x;
        out_[r] = c.in_place ? x : ByteVec(x.size(), kUnwritten);
        for (uint32_t k = 0; k < n_; ++k) {
          expected_[r].insert(expected_[r].end(), inputs[k].begin() + r * block,
                              inputs[k].begin() + (r + 1) * block);
        }
        break;
      case Kind::kSendRecv:
        in_[r] = x;
        if (r == c.peer) {
          out_[r] = ByteVec(x.size(), kUnwritten);
          expected_[r] = inputs[c.root];
        }
        break;
      case Kind::kBarrier:
        break;
    }
  }

  ConstBytes in_view(uint32_t r) {
    const uint64_t block = c_.count * dtype_size(c_.dtype);
    if (!c_.in_place || c_.kind == Kind::kSendRecv) return in_[r];
    switch (c_.kind) {
      case Kind::kAllGather:
        return Bytes(out_[r]).subspan(r * block, block);
      case Kind::kBroadcast:
      case Kind::kReduce:
        return r == c_.root ? ConstBytes(out_[r]) : ConstBytes(in_[r]);
      case Kind::kReduceScatter:
        return in_[r];
      default:
        return out_[r];
    }
  }
  Bytes out_view(uint32_t r) {
    const uint64_t block = c_.count * dtype_size(c_.dtype);
    if (c_.in_place && c_.kind == Kind::kReduceScatter) {
      return Bytes(in_[r]).subspan(r * block, block);
    }
    return out_[r];
  }

  Case c_;
  uint32_t n_;
  std::vector<ByteVec> in_, out_, expected_;
};

// Every rank's script: `cases` one after another, each on the ranks that
// take part.
inline std::vector<std::vector<Starter>> scripts_of(
    std::vector<PreparedCase>& cases, uint32_t ranks) {
  std::vector<std::vector<Starter>> scripts(ranks);
  for (auto& pc : cases) {
    for (uint32_t r = 0; r < ranks; ++r) {
      if (auto s = pc.starter(r)) scripts[r].push_back(*s);
    }
  }
  return scripts;
}

// Runs `cases` one after another on every rank of `cluster` in one run;
// returns the run and every rank's statuses.
inline ScriptRun run_cases(Cluster& cluster, std::vector<PreparedCase>& cases) {
  return cluster.run_scripts(scripts_of(cases, cluster.size()));
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_SUITE_CASES_H_
