// jaccl_conformance: every call of JACCL's Group, on every rank, checked
// byte by byte against results computed in this program
// (expected_values.h): all_sum, all_max and all_min for every Dtype, in
// place and out of place, at element counts that are and are not multiples
// of the group size, 0 included; all_gather and sum_scatter, in place and
// out of place; send/recv between every joined pair (neighbours only with
// --neighbours_only, as in a ring); barrier. Sizes that are not whole
// elements, unknown dtypes, peers out of range or this rank itself (and,
// with --unjoined_refused, a peer no cable joins) must throw
// std::runtime_error naming the argument, and leave the group usable and
// the output untouched. Also checks jaccl/types.h's conversions and
// dtype_size.
//
//   jaccl_conformance [--start=env|config ...] [--neighbours_only]
//                     [--unjoined_refused] [--max_count=N]
//
// Written against JACCL's headers only. Exit codes: 0 every check passed
// (the last line is "rank R: conformance OK, N checks"); 1 a check failed
// (a line per failure naming call, dtype, size, rank and the first wrong
// index); 3 a call threw where it should not have (program_start.h).
#include <jaccl/jaccl.h>
#include <jaccl/types.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "expected_values.h"
#include "program_start.h"

namespace conformance {
namespace {

constexpr uint8_t kSentinel = 0xA5;

class Checker {
 public:
  Checker(int rank) : rank_(rank) {}

  // Compares got with want; on a difference prints the first wrong element.
  void bytes(const std::string& call, const std::string& dtype, size_t n_bytes,
             const char* placement, const uint8_t* got,
             const std::vector<uint8_t>& want, size_t elem_size) {
    ++checks_;
    const auto wrong = std::mismatch(want.begin(), want.end(), got);
    if (wrong.first == want.end()) return;
    const size_t byte = size_t(wrong.first - want.begin());
    const size_t index = byte / elem_size;
    std::ostringstream got_hex, want_hex;
    for (size_t k = index * elem_size; k < (index + 1) * elem_size; ++k) {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%02x", got[k]);
      got_hex << buf;
      std::snprintf(buf, sizeof(buf), "%02x", want[k]);
      want_hex << buf;
    }
    fail(call + " dtype=" + dtype + " n_bytes=" + std::to_string(n_bytes) +
         " " + placement + ": first wrong index " + std::to_string(index) +
         " (bytes " + got_hex.str() + ", expected " + want_hex.str() + ")");
  }

  // body() must throw std::runtime_error (a refusal) whose message names
  // `subject` (the argument at fault); anything else fails.
  void refuses(const std::string& what, const std::string& subject,
               const std::function<void()>& body) {
    ++checks_;
    try {
      body();
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      if (message.empty() || message.find(subject) == std::string::npos) {
        fail(what + ": the message does not name " + subject + ": " + message);
      }
      return;
    } catch (const std::exception& e) {
      fail(what + ": threw a type other than std::runtime_error: " + e.what());
      return;
    }
    fail(what + ": was not refused");
  }

  void truth(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) fail(what);
  }

  void fail(const std::string& what) {
    ++failures_;
    std::cout << "FAIL rank " << rank_ << ": " << what << std::endl;
  }

  int checks() const { return checks_; }
  int failures() const { return failures_; }

 private:
  int rank_;
  int checks_ = 0;
  int failures_ = 0;
};

// Element counts for the reductions: 0, around the group size and a
// multiple of it, a prime, and one past 64 KiB of float32.
std::vector<size_t> reduce_counts(int size, size_t max_count) {
  std::vector<size_t> counts = {0,
                                1,
                                size_t(size - 1),
                                size_t(size),
                                size_t(size + 1),
                                size_t(3 * size + 2),
                                1009,
                                16411};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  counts.erase(std::remove_if(counts.begin(), counts.end(),
                              [&](size_t c) { return c > max_count; }),
               counts.end());
  return counts;
}

void call_reduce(jaccl::Group& g, Op op, const void* in, void* out, size_t n,
                 int dtype) {
  if (op == Op::kSum) g.all_sum(in, out, n, dtype);
  if (op == Op::kMax) g.all_max(in, out, n, dtype);
  if (op == Op::kMin) g.all_min(in, out, n, dtype);
}

void check_reductions(jaccl::Group& g, Checker& c, size_t max_count) {
  const int rank = g.rank(), size = g.size();
  for (const DtypeInfo& d : all_dtypes()) {
    for (Op op : {Op::kSum, Op::kMax, Op::kMin}) {
      for (size_t count : reduce_counts(size, max_count)) {
        const size_t n = count * d.size;
        // Each (op, count) starts at its own offset of the sequence.
        const uint64_t first = count * 7 + uint64_t(op) * 100003;
        const std::vector<uint8_t> in = input_bytes(d, rank, first, count);
        const std::vector<uint8_t> want =
            reduced_bytes(d, op, size, first, count);
        std::vector<uint8_t> out(n + 1, kSentinel);
        call_reduce(g, op, in.data(), out.data(), n, d.value);
        c.bytes(op_name(op), d.name, n, "out of place", out.data(), want,
                d.size);
        c.truth(out[n] == kSentinel,
                std::string(op_name(op)) + " dtype=" + d.name + " n_bytes=" +
                    std::to_string(n) + ": wrote past the output");
        std::vector<uint8_t> buf = in;
        call_reduce(g, op, buf.data(), buf.data(), n, d.value);
        c.bytes(op_name(op), d.name, n, "in place", buf.data(), want, d.size);
      }
    }
  }
}

void check_all_gather(jaccl::Group& g, Checker& c, size_t max_count) {
  const int rank = g.rank(), size = g.size();
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(size), size_t(4099),
                   size_t(65537)}) {
    if (n > max_count * 8) continue;
    std::vector<uint8_t> want;
    for (int r = 0; r < size; ++r) {
      const std::vector<uint8_t> block = pattern(n, r, n);
      want.insert(want.end(), block.begin(), block.end());
    }
    const std::vector<uint8_t> in = pattern(n, rank, n);
    std::vector<uint8_t> out(size_t(size) * n + 1, kSentinel);
    g.all_gather(in.data(), out.data(), n);
    c.bytes("all_gather", "bytes", n, "out of place", out.data(), want, 1);
    c.truth(out.back() == kSentinel, "all_gather n_bytes=" + std::to_string(n) +
                                         ": wrote past the output");
    // In place: the input is this rank's block of the output.
    std::vector<uint8_t> buf(size_t(size) * n, kSentinel);
    std::copy(in.begin(), in.end(), buf.begin() + rank * n);
    g.all_gather(buf.data() + rank * n, buf.data(), n);
    c.bytes("all_gather", "bytes", n, "in place", buf.data(), want, 1);
  }
}

void check_sum_scatter(jaccl::Group& g, Checker& c, size_t max_count) {
  const int rank = g.rank(), size = g.size();
  for (const DtypeInfo& d : all_dtypes()) {
    for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(1001)}) {
      if (count > max_count) continue;
      const size_t n = count * d.size;  // the output: one block
      const uint64_t first = 500000 + count;
      const std::vector<uint8_t> in =
          input_bytes(d, rank, first, size_t(size) * count);
      const std::vector<uint8_t> want =
          reduced_bytes(d, Op::kSum, size, first + rank * count, count);
      std::vector<uint8_t> out(n + 1, kSentinel);
      g.sum_scatter(in.data(), out.data(), n, d.value);
      c.bytes("sum_scatter", d.name, n, "out of place", out.data(), want,
              d.size);
      c.truth(out[n] == kSentinel, std::string("sum_scatter dtype=") + d.name +
                                       ": wrote past the output");
      // In place: the output is this rank's block of the input.
      std::vector<uint8_t> buf = in;
      g.sum_scatter(buf.data(), buf.data() + rank * n, n, d.value);
      c.bytes("sum_scatter", d.name, n, "in place", buf.data() + rank * n, want,
              d.size);
    }
  }
}

// Disjoint rounds of pairs (each rank in at most one pair per round),
// the same on every rank; in a pair the lower rank sends first.
std::vector<std::vector<std::pair<int, int>>> pair_rounds(int size,
                                                          bool neighbours) {
  std::vector<std::pair<int, int>> edges;
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      const bool joined = b == a + 1 || (a == 0 && b == size - 1);
      if (!neighbours || joined) edges.push_back({a, b});
    }
  }
  std::vector<std::vector<std::pair<int, int>>> rounds;
  while (!edges.empty()) {
    std::vector<bool> busy(size_t(size), false);
    std::vector<std::pair<int, int>> round, rest;
    for (const auto& e : edges) {
      if (busy[e.first] || busy[e.second]) {
        rest.push_back(e);
      } else {
        busy[e.first] = busy[e.second] = true;
        round.push_back(e);
      }
    }
    rounds.push_back(round);
    edges = rest;
  }
  return rounds;
}

void check_send_recv(jaccl::Group& g, Checker& c, bool neighbours,
                     size_t max_count) {
  const int rank = g.rank(), size = g.size();
  for (size_t n : {size_t(0), size_t(1), size_t(4099), size_t(70001)}) {
    if (n > max_count * 8) continue;
    for (const auto& round : pair_rounds(size, neighbours)) {
      for (const auto& [lo, hi] : round) {
        if (rank != lo && rank != hi) continue;
        const int peer = rank == lo ? hi : lo;
        // The data depends on its sender, so a message from the wrong peer
        // is caught.
        const uint64_t salt = n * 64 + uint64_t(peer);
        const std::vector<uint8_t> mine = pattern(n * 64 + rank, rank, n);
        const std::vector<uint8_t> want = pattern(salt, peer, n);
        std::vector<uint8_t> got(n + 1, kSentinel);
        if (rank == lo) g.send(mine.data(), n, peer);
        g.recv(got.data(), n, peer);
        if (rank == hi) g.send(mine.data(), n, peer);
        c.bytes("recv from " + std::to_string(peer), "bytes", n, "", got.data(),
                want, 1);
        c.truth(got[n] == kSentinel, "recv wrote past the output");
      }
    }
  }
}

// A call every rank makes with the same bad argument must throw
// std::runtime_error on every rank, write nothing, and leave the group
// usable (the caller's next checks run on it).
void check_refusals(jaccl::Group& g, Checker& c, bool unjoined_refused) {
  const int size = g.size();
  std::vector<uint8_t> in(64 * size_t(size), 1);
  std::vector<uint8_t> out(64 * size_t(size), kSentinel);
  for (const DtypeInfo& d : all_dtypes()) {
    if (d.size == 1) continue;
    const size_t n = 3 * d.size + 1;  // not whole elements
    const std::string where =
        std::string(" dtype=") + d.name + " n_bytes=" + std::to_string(n);
    for (Op op : {Op::kSum, Op::kMax, Op::kMin}) {
      c.refuses(op_name(op) + where, "n_bytes",
                [&] { call_reduce(g, op, in.data(), out.data(), n, d.value); });
    }
    c.refuses("sum_scatter" + where, "n_bytes",
              [&] { g.sum_scatter(in.data(), out.data(), n, d.value); });
  }
  for (int dtype : {14, -1, 1000}) {
    const std::string where = " unknown dtype " + std::to_string(dtype);
    c.refuses("all_sum" + where, "dtype",
              [&] { g.all_sum(in.data(), out.data(), 8, dtype); });
    c.refuses("all_max" + where, "dtype",
              [&] { g.all_max(in.data(), out.data(), 8, dtype); });
    c.refuses("sum_scatter" + where, "dtype",
              [&] { g.sum_scatter(in.data(), out.data(), 8, dtype); });
  }
  for (int peer : {-1, size, size + 5, g.rank()}) {
    const std::string where =
        " peer " + std::to_string(peer) + " (out of range or this rank)";
    c.refuses("send" + where, "dst", [&] { g.send(in.data(), 8, peer); });
    c.refuses("recv" + where, "src", [&] { g.recv(out.data(), 8, peer); });
  }
  if (unjoined_refused) {
    // In a ring of 4 or more, rank + 2 is joined to this rank by no cable.
    const int far = (g.rank() + 2) % size;
    c.refuses("send to unjoined rank " + std::to_string(far), "",
              [&] { g.send(in.data(), 8, far); });
    c.refuses("recv from unjoined rank " + std::to_string(far), "",
              [&] { g.recv(out.data(), 8, far); });
  }
  c.truth(std::all_of(out.begin(), out.end(),
                      [](uint8_t b) { return b == kSentinel; }),
          "a refused call wrote to its output");
}

// jaccl/types.h: dtype_size and the float16/bfloat16 conversions of small
// integers and of ties (to even), against the bits computed by hand.
void check_types(Checker& c) {
  for (const DtypeInfo& d : all_dtypes()) {
    c.truth(jaccl::dtype_size(d.value) == d.size,
            std::string("dtype_size(") + d.name + ")");
  }
  c.truth(jaccl::dtype_size(14) == 0 && jaccl::dtype_size(-1) == 0,
          "dtype_size of a value outside Dtype is not 0");
  for (int k = -64; k <= 64; ++k) {
    const jaccl::float16_t h(static_cast<float>(k));
    const jaccl::bfloat16_t b(static_cast<float>(k));
    uint16_t h_bits, b_bits;
    std::memcpy(&h_bits, &h, 2);
    std::memcpy(&b_bits, &b, 2);
    const std::string at = " of " + std::to_string(k);
    c.truth(h_bits == half_bits(k), "float16_t bits" + at);
    c.truth(b_bits == uint16_t(float_bits(float(k)) >> 16),
            "bfloat16_t bits" + at);
    c.truth(static_cast<float>(h) == float(k), "float(float16_t)" + at);
    c.truth(static_cast<float>(b) == float(k), "float(bfloat16_t)" + at);
  }
  // Halfway between two neighbours: to the one with the even last bit.
  const std::pair<int, int> half_ties[] = {{2049, 2048}, {2051, 2052}};
  for (const auto& [from, to] : half_ties) {
    const jaccl::float16_t h(static_cast<float>(from));
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    c.truth(bits == half_bits(to), "float16_t of " + std::to_string(from) +
                                       " rounds to " + std::to_string(to));
  }
  const std::pair<int, int> bfloat_ties[] = {{257, 256}, {259, 260}};
  for (const auto& [from, to] : bfloat_ties) {
    const jaccl::bfloat16_t b(static_cast<float>(from));
    uint16_t bits;
    std::memcpy(&bits, &b, 2);
    c.truth(bits == uint16_t(float_bits(float(to)) >> 16),
            "bfloat16_t of " + std::to_string(from) + " rounds to " +
                std::to_string(to));
  }
}

int run(const Args& args) {
  const std::shared_ptr<jaccl::Group> group = start_group(args);
  jaccl::Group& g = *group;
  const int rank = g.rank(), size = g.size();
  const size_t max_count = size_t(args.get_int("max_count", 1 << 30));
  std::cout << "rank " << rank << " of " << size << std::endl;
  Checker c(rank);
  check_types(c);
  check_reductions(g, c, max_count);
  check_refusals(g, c, args.has("unjoined_refused"));
  check_all_gather(g, c, max_count);
  check_sum_scatter(g, c, max_count);
  check_send_recv(g, c, args.has("neighbours_only"), max_count);
  for (int i = 0; i < 3; ++i) g.barrier();
  // The group is healthy after everything above.
  const int32_t one = rank + 1;
  int32_t total = 0;
  g.all_sum(&one, &total, sizeof(one), jaccl::Int32);
  c.truth(total == size * (size + 1) / 2, "final all_sum");
  if (c.failures() > 0) {
    std::cout << "rank " << rank << ": conformance FAILED, " << c.failures()
              << " of " << c.checks() << " checks" << std::endl;
    return 1;
  }
  std::cout << "rank " << rank << ": conformance OK, " << c.checks()
            << " checks" << std::endl;
  return 0;
}

}  // namespace
}  // namespace conformance

int main(int argc, char** argv) {
  return conformance::run_main("jaccl_conformance", [&] {
    return conformance::run(conformance::Args(argc, argv));
  });
}
