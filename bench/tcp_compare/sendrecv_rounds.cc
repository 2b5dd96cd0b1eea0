#include "bench/tcp_compare/sendrecv_rounds.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "collectives/dtype.h"
#include "net/stream.h"
#include "nlohmann/json.hpp"
#include "tools/cli/output_file.h"

namespace weft::bench {
namespace {

enum class Path { kWeft, kPlain };

constexpr double kBytesPerGigabyte = 1e9;
constexpr double kNsPerMsD = 1e6;
constexpr double kNsPerSD = 1e9;

// Byte i of a round's message; the two paths and every round differ, so a
// message left over from another round cannot pass the check.
std::byte pattern(uint64_t i, uint32_t round, Path path) {
  const uint64_t salt = path == Path::kWeft ? 1 : 3;
  return static_cast<std::byte>((i * 131 + round * 7 + salt) & 0xff);
}

// The plain stream's transfers, each bounded by the configured deadline.
class PlainStream {
 public:
  PlainStream(const net::Socket& socket, TimeNs deadline_ns)
      : socket_(socket), deadline_ns_(deadline_ns) {}

  absl::Status send(std::span<const std::byte> bytes) const {
    return net::send_all(socket_.fd(), bytes, deadline(), clock_);
  }
  absl::Status receive(std::span<std::byte> bytes) const {
    return net::receive_all(socket_.fd(), bytes, deadline(), clock_);
  }

 private:
  TimeNs deadline() const {
    return deadline_after(clock_.now_ns(), deadline_ns_);
  }

  const net::Socket& socket_;
  TimeNs deadline_ns_;
  WallClock clock_;
};

class Rounds {
 public:
  Rounds(Group& group, const PlainStream& stream, const RoundsConfig& c)
      : group_(group), stream_(stream), buffer_(c.bytes) {}

  // Rank 0: fills, waits for "ready", sends.
  absl::Status send(uint32_t round, Path path) {
    for (uint64_t i = 0; i < buffer_.size(); ++i) {
      buffer_[i] = pattern(i, round, path);
    }
    std::array<std::byte, 1> ready{};
    if (absl::Status s = stream_.receive(ready); !s.ok()) return s;
    absl::Status s = path == Path::kWeft
                         ? group_.send(buffer_, DType::kUint8, 1)
                         : stream_.send(buffer_);
    if (!s.ok() || path == Path::kPlain) return s;
    return group_.barrier();
  }

  // Rank 1: poisons, starts the clock, says "ready", receives the whole
  // message, stops the clock; then counts wrong bytes into *wrong.
  absl::StatusOr<TimeNs> receive(uint32_t round, Path path, uint64_t* wrong) {
    for (uint64_t i = 0; i < buffer_.size(); ++i) {
      buffer_[i] = ~pattern(i, round, path);
    }
    const std::array<std::byte, 1> ready{std::byte{1}};
    const TimeNs start_ns = clock_.now_ns();
    if (absl::Status s = stream_.send(ready); !s.ok()) return s;
    absl::Status s = path == Path::kWeft
                         ? group_.recv(buffer_, DType::kUint8, 0)
                         : stream_.receive(buffer_);
    if (!s.ok()) return s;
    const TimeNs elapsed_ns = clock_.now_ns() - start_ns;
    // Untimed: both ranks leave weft together, nothing owed (a simulated
    // world moves only while every rank is inside weft).
    if (path == Path::kWeft) {
      if (s = group_.barrier(); !s.ok()) return s;
    }
    for (uint64_t i = 0; i < buffer_.size(); ++i) {
      *wrong += buffer_[i] != pattern(i, round, path);
    }
    return elapsed_ns;
  }

 private:
  Group& group_;
  const PlainStream& stream_;
  std::vector<std::byte> buffer_;
  WallClock clock_;
};

// Rank 1's times and wrong-byte count, to rank 0 over the plain stream, as
// little-endian 64-bit words.
absl::Status share_result(const PlainStream& stream, uint32_t rank,
                          RoundsResult* r) {
  const size_t words = r->weft_ns.size() + r->plain_ns.size() + 1;
  std::vector<std::byte> bytes(8 * words);
  auto word = [&bytes](size_t w, uint64_t* v, bool put) {
    for (size_t i = 0; i < 8; ++i) {
      if (put) {
        bytes[8 * w + i] = static_cast<std::byte>(*v >> (8 * i));
      } else {
        *v |= static_cast<uint64_t>(bytes[8 * w + i]) << (8 * i);
      }
    }
  };
  std::vector<TimeNs*> slots;
  for (TimeNs& t : r->weft_ns) slots.push_back(&t);
  for (TimeNs& t : r->plain_ns) slots.push_back(&t);
  const bool put = rank == 1;
  if (!put) {
    if (absl::Status s = stream.receive(bytes); !s.ok()) return s;
    r->wrong_bytes = 0;
  }
  for (size_t w = 0; w < slots.size(); ++w) {
    uint64_t v = put ? static_cast<uint64_t>(*slots[w]) : 0;
    word(w, &v, put);
    if (!put) *slots[w] = static_cast<TimeNs>(v);
  }
  word(slots.size(), &r->wrong_bytes, put);
  return put ? stream.send(bytes) : absl::OkStatus();
}

double gbs(uint64_t bytes, double ns) {
  return static_cast<double>(bytes) / kBytesPerGigabyte / (ns / kNsPerSD);
}

}  // namespace

absl::StatusOr<RoundsResult> run_rounds(Group& group, const net::Socket& stream,
                                        uint32_t rank, const RoundsConfig& c) {
  const PlainStream plain(stream, c.deadline_ns);
  Rounds rounds(group, plain, c);
  RoundsResult r;
  r.weft_ns.assign(c.rounds, 0);
  r.plain_ns.assign(c.rounds, 0);
  // Round 0 of each path warms up; then the order alternates.
  for (uint32_t round = 0; round <= c.rounds; ++round) {
    const bool weft_first = round % 2 == 0;
    for (Path path : {weft_first ? Path::kWeft : Path::kPlain,
                      weft_first ? Path::kPlain : Path::kWeft}) {
      if (rank == 0) {
        if (absl::Status s = rounds.send(round, path); !s.ok()) return s;
        continue;
      }
      absl::StatusOr<TimeNs> ns = rounds.receive(round, path, &r.wrong_bytes);
      if (!ns.ok()) return ns.status();
      if (round == 0) continue;
      (path == Path::kWeft ? r.weft_ns : r.plain_ns)[round - 1] = *ns;
    }
  }
  if (absl::Status s = share_result(plain, rank, &r); !s.ok()) return s;
  return r;
}

double median_ns(std::vector<TimeNs> ns) {
  std::sort(ns.begin(), ns.end());
  const size_t mid = ns.size() / 2;
  if (ns.size() % 2 == 1) return static_cast<double>(ns[mid]);
  return (static_cast<double>(ns[mid - 1]) + static_cast<double>(ns[mid])) / 2;
}

std::string format_rounds(const RoundsConfig& c, const RoundsResult& r) {
  const double weft = median_ns(r.weft_ns);
  const double plain = median_ns(r.plain_ns);
  std::string out = absl::StrFormat(
      "# tcp_sendrecv: %u bytes, rank 0 -> rank 1, %u rounds of each path "
      "interleaved, medians\n"
      "# %-10s  %12s  %8s\n",
      c.bytes, c.rounds, "path", "time (ms)", "GB/s");
  absl::StrAppendFormat(&out, "  %-10s  %12.3f  %8.3f\n", "weft-tcp",
                        weft / kNsPerMsD, gbs(c.bytes, weft));
  absl::StrAppendFormat(&out, "  %-10s  %12.3f  %8.3f\n", "plain-tcp",
                        plain / kNsPerMsD, gbs(c.bytes, plain));
  absl::StrAppendFormat(&out,
                        "# ratio weft/plain : %.3f\n# wrong bytes      : %u\n",
                        plain / weft, r.wrong_bytes);
  return out;
}

absl::Status write_rounds_json(const std::string& path, const RoundsConfig& c,
                               const RoundsResult& r) {
  const double weft = median_ns(r.weft_ns);
  const double plain = median_ns(r.plain_ns);
  const nlohmann::json doc = {
      {"tool", "tcp_sendrecv"},      {"bytes", c.bytes},
      {"rounds", c.rounds},          {"weft_ns", r.weft_ns},
      {"plain_ns", r.plain_ns},      {"weft_median_ns", weft},
      {"plain_median_ns", plain},    {"ratio", plain / weft},
      {"wrong_bytes", r.wrong_bytes}};
  return tools::cli::write_text_file(path, doc.dump(1) + "\n");
}

}  // namespace weft::bench
