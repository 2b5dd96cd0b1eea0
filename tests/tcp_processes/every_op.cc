#include "tests/tcp_processes/every_op.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/dtype.h"

namespace weft::tcp_processes {
namespace {

// Rank r's contribution at index i: an integer in [-100, 100] that every
// rank can compute for every other rank. Sums, maxima and minima of a few
// of them are exact in int32 and float32 alike.
int32_t value(uint32_t rank, uint64_t index, uint64_t salt = 0) {
  return static_cast<int32_t>((index * 7 + rank * 13 + salt * 3) % 201) - 100;
}

// For products: -2, 2 or 1, so a product over 4 ranks stays within 16.
int32_t factor(uint32_t rank, uint64_t index) {
  if ((index * 3 + rank) % 5 == 0) return -2;
  return (index + rank) % 3 == 0 ? 2 : 1;
}

template <typename T>
DType dtype_of();
template <>
DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
DType dtype_of<float>() {
  return DType::kFloat32;
}
template <typename T>
const char* name_of() {
  return dtype_of<T>() == DType::kInt32 ? "int32" : "float32";
}

template <typename T>
ConstBytes cbytes(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}
template <typename T>
Bytes wbytes(std::vector<T>& v) {
  return std::as_writable_bytes(std::span<T>(v));
}

int32_t combine(ReduceOp op, int32_t a, int32_t b) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kProd:
      return a * b;
    case ReduceOp::kMax:
      return a > b ? a : b;
    case ReduceOp::kMin:
      return a < b ? a : b;
  }
  return 0;
}

// Rank r's input element i for a reduction with `op`.
int32_t input(ReduceOp op, uint32_t rank, uint64_t index) {
  return op == ReduceOp::kProd ? factor(rank, index) : value(rank, index);
}

// op over every rank's input(op, r, index), in rank order.
int32_t reduced(ReduceOp op, uint32_t ranks, uint64_t index) {
  int32_t acc = input(op, 0, index);
  for (uint32_t r = 1; r < ranks; ++r)
    acc = combine(op, acc, input(op, r, index));
  return acc;
}

class Checker {
 public:
  explicit Checker(Group& group) : group_(group) {}

  Group& group() { return group_; }
  uint32_t rank() const { return group_.rank(); }
  uint32_t ranks() const { return group_.size(); }
  bool stopped() const { return tally_.errors > 0; }
  const Tally& tally() const { return tally_; }

  // Records one call's result: its status, then got against want.
  template <typename T>
  void check(const std::string& what, const absl::Status& status,
             std::span<const T> got, std::span<const T> want) {
    if (!status.ok()) {
      ++tally_.errors;
      say(absl::StrCat(what,
                       ": error: ", absl::StatusCodeToString(status.code()),
                       ": ", status.message()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i]) {
        ++tally_.wrong;
        say(absl::StrFormat("%s: WRONG at element %u: got %g, want %g", what, i,
                            static_cast<double>(got[i]),
                            static_cast<double>(want[i])));
        return;
      }
    }
    ++tally_.correct;
    say(absl::StrCat(what, ": OK"));
  }

  void say(const std::string& text) const {
    // One write per line, so the ranks' lines do not interleave.
    const std::string line = absl::StrCat("rank ", rank(), ": ", text, "\n");
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  Group& group_;
  Tally tally_;
};

std::string label(const char* call, const char* dtype, uint64_t count,
                  bool in_place) {
  return absl::StrCat(call, " ", dtype, " ", count,
                      in_place ? " in-place" : " out-of-place");
}

absl::Status reduce_call(Group& g, ReduceOp op, ConstBytes in, Bytes out,
                         DType dtype) {
  switch (op) {
    case ReduceOp::kSum:
      return g.all_sum(in, out, dtype);
    case ReduceOp::kProd:
      return g.all_prod(in, out, dtype);
    case ReduceOp::kMax:
      return g.all_max(in, out, dtype);
    case ReduceOp::kMin:
      return g.all_min(in, out, dtype);
  }
  return absl::InternalError("no such op");
}

// all_sum/all_prod/all_max/all_min, and all_reduce with the same op.
template <typename T>
void reductions(Checker& c, uint64_t count, bool in_place) {
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin}) {
    std::vector<T> in(count), out(count), want(count);
    for (uint64_t i = 0; i < count; ++i) {
      in[i] = static_cast<T>(input(op, c.rank(), i));
      want[i] = static_cast<T>(reduced(op, c.ranks(), i));
    }
    std::vector<T>& result = in_place ? in : out;
    const absl::Status s =
        reduce_call(c.group(), op, cbytes(in), wbytes(result), dtype_of<T>());
    c.check<T>(
        label(absl::StrCat("all_", std::string(reduce_op_name(op))).c_str(),
              name_of<T>(), count, in_place),
        s, result, want);
    if (c.stopped()) return;
    // all_reduce names the op instead of the call doing so.
    for (uint64_t i = 0; i < count; ++i) {
      in[i] = static_cast<T>(input(op, c.rank(), i));
    }
    const absl::Status r =
        c.group().all_reduce(cbytes(in), wbytes(result), dtype_of<T>(), op);
    c.check<T>(
        label(absl::StrCat("all_reduce(", std::string(reduce_op_name(op)), ")")
                  .c_str(),
              name_of<T>(), count, in_place),
        r, result, want);
    if (c.stopped()) return;
  }
}

void all_gather(Checker& c, uint64_t count, bool in_place) {
  const uint32_t n = c.ranks();
  std::vector<int32_t> in(count), out(n * count), want(n * count);
  for (uint32_t j = 0; j < n; ++j) {
    for (uint64_t i = 0; i < count; ++i) want[j * count + i] = value(j, i);
  }
  for (uint64_t i = 0; i < count; ++i) in[i] = value(c.rank(), i);
  ConstBytes source = cbytes(in);
  if (in_place) {
    std::copy(in.begin(), in.end(), out.begin() + c.rank() * count);
    source = cbytes(out).subspan(c.rank() * count * sizeof(int32_t),
                                 count * sizeof(int32_t));
  }
  const absl::Status s =
      c.group().all_gather(source, wbytes(out), DType::kInt32);
  c.check<int32_t>(label("all_gather", "int32", count, in_place), s, out, want);
}

// sum_scatter, and reduce_scatter with max.
void scatters(Checker& c, uint64_t count, bool in_place) {
  const uint32_t n = c.ranks();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
    std::vector<int32_t> in(n * count), out(count), want(count);
    for (uint64_t i = 0; i < n * count; ++i) in[i] = input(op, c.rank(), i);
    for (uint64_t i = 0; i < count; ++i) {
      want[i] = reduced(op, n, c.rank() * count + i);
    }
    Bytes target = wbytes(out);
    if (in_place) {
      target = wbytes(in).subspan(c.rank() * count * sizeof(int32_t),
                                  count * sizeof(int32_t));
    }
    const absl::Status s =
        op == ReduceOp::kSum
            ? c.group().sum_scatter(cbytes(in), target, DType::kInt32)
            : c.group().reduce_scatter(cbytes(in), target, DType::kInt32, op);
    const std::span<const int32_t> got(
        reinterpret_cast<const int32_t*>(target.data()), count);
    c.check<int32_t>(
        label(op == ReduceOp::kSum ? "sum_scatter" : "reduce_scatter(max)",
              "int32", count, in_place),
        s, got, want);
    if (c.stopped()) return;
  }
}

// broadcast from the first and the last rank; reduce(sum) to the last.
void rooted(Checker& c, uint64_t count, bool in_place) {
  for (uint32_t root : {0u, c.ranks() - 1}) {
    std::vector<int32_t> in(count), out(count), want(count);
    for (uint64_t i = 0; i < count; ++i) {
      want[i] = value(root, i, /*salt=*/1);
      if (c.rank() == root) in[i] = want[i];
    }
    std::vector<int32_t>& result = in_place ? in : out;
    const absl::Status s =
        c.group().broadcast(cbytes(in), wbytes(result), DType::kInt32, root);
    c.check<int32_t>(label(absl::StrCat("broadcast(root ", root, ")").c_str(),
                           "int32", count, in_place),
                     s, result, want);
    if (c.stopped()) return;
  }
  const uint32_t root = c.ranks() - 1;
  std::vector<int32_t> in(count), out(count), want(count);
  for (uint64_t i = 0; i < count; ++i) {
    in[i] = value(c.rank(), i);
    want[i] = reduced(ReduceOp::kSum, c.ranks(), i);
  }
  std::vector<int32_t>& result = in_place ? in : out;
  const absl::Status s = c.group().reduce(cbytes(in), wbytes(result),
                                          DType::kInt32, ReduceOp::kSum, root);
  // Only the root's output is defined.
  const std::span<const int32_t> checked = c.rank() == root
                                               ? std::span<const int32_t>(want)
                                               : std::span<const int32_t>();
  c.check<int32_t>(label("reduce(sum, root last)", "int32", count, in_place), s,
                   result, checked);
}

void all_to_all(Checker& c, uint64_t count, bool in_place) {
  const uint32_t n = c.ranks();
  std::vector<int32_t> in(n * count), out(n * count), want(n * count);
  for (uint32_t j = 0; j < n; ++j) {
    for (uint64_t i = 0; i < count; ++i) {
      in[j * count + i] = value(c.rank(), j * count + i, /*salt=*/2);
      want[j * count + i] = value(j, c.rank() * count + i, /*salt=*/2);
    }
  }
  std::vector<int32_t>& result = in_place ? in : out;
  const absl::Status s =
      c.group().all_to_all(cbytes(in), wbytes(result), DType::kInt32);
  c.check<int32_t>(label("all_to_all", "int32", count, in_place), s, result,
                   want);
}

// Each rank sends to the next and receives from the one before. A rank's
// operations run in the order they are started and a send ends once its
// receiver took it, so even ranks send first and odd ranks receive first:
// every rank sending first would wait in a circle.
void send_recv(Checker& c, uint64_t count) {
  const uint32_t n = c.ranks();
  const uint32_t next = (c.rank() + 1) % n;
  const uint32_t prev = (c.rank() + n - 1) % n;
  std::vector<int32_t> in(count), out(count), want(count);
  for (uint64_t i = 0; i < count; ++i) {
    in[i] = value(c.rank(), i, /*salt=*/next);
    want[i] = value(prev, i, /*salt=*/c.rank());
  }
  const auto send = [&] {
    return c.group().send(cbytes(in), DType::kInt32, next);
  };
  const auto recv = [&] {
    return c.group().recv(wbytes(out), DType::kInt32, prev);
  };
  absl::Status s = c.rank() % 2 == 0 ? send() : recv();
  if (s.ok()) s = c.rank() % 2 == 0 ? recv() : send();
  c.check<int32_t>(
      absl::StrCat("send/recv int32 ", count, " to ", next, " from ", prev), s,
      out, want);
}

void barrier_and_split(Checker& c) {
  // The ranks in reverse: this rank is rank n-1-r of the split group.
  std::vector<uint32_t> reversed;
  for (uint32_t r = c.ranks(); r > 0; --r) reversed.push_back(r - 1);
  absl::StatusOr<std::unique_ptr<Group>> split = c.group().split(reversed);
  if (!split.ok()) {
    c.check<int32_t>("split", split.status(), {}, {});
    return;
  }
  constexpr uint64_t kCount = 1000;
  std::vector<int32_t> in(kCount), out(kCount), want(kCount);
  for (uint64_t i = 0; i < kCount; ++i) {
    in[i] = value(c.rank(), i);
    want[i] = reduced(ReduceOp::kSum, c.ranks(), i);
  }
  const absl::Status s =
      (*split)->all_sum(cbytes(in), wbytes(out), DType::kInt32);
  c.check<int32_t>(absl::StrCat("split(reversed) all_sum int32 ", kCount), s,
                   out, want);
  if (c.stopped()) return;
  c.check<int32_t>("barrier", c.group().barrier(), {}, {});
}

}  // namespace

Tally run_every_op(Group& group, uint64_t large_count) {
  Checker c(group);
  for (uint64_t count : {uint64_t{0}, uint64_t{1}, large_count}) {
    for (bool in_place : {false, true}) {
      reductions<int32_t>(c, count, in_place);
      if (!c.stopped()) reductions<float>(c, count, in_place);
      if (!c.stopped()) all_gather(c, count, in_place);
      if (!c.stopped()) scatters(c, count, in_place);
      if (!c.stopped()) rooted(c, count, in_place);
      if (!c.stopped()) all_to_all(c, count, in_place);
      if (c.stopped()) return c.tally();
    }
    send_recv(c, count);
    if (c.stopped()) return c.tally();
  }
  barrier_and_split(c);
  return c.tally();
}

bool checked_all_sum(Group& group, uint64_t count, uint64_t iteration,
                     absl::Status* status) {
  std::vector<int32_t> in(count), out(count);
  for (uint64_t i = 0; i < count; ++i) {
    in[i] = value(group.rank(), i, iteration);
  }
  *status = group.all_sum(cbytes(in), wbytes(out), DType::kInt32);
  if (!status->ok()) return true;  // an error, not wrong bytes
  for (uint64_t i = 0; i < count; ++i) {
    int32_t want = 0;
    for (uint32_t r = 0; r < group.size(); ++r) want += value(r, i, iteration);
    if (out[i] != want) return false;
  }
  return true;
}

}  // namespace weft::tcp_processes
