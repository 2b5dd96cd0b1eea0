// tcp_sendrecv: the TCP fabric's own overhead between two processes. Rank 0
// sends one message (64 MiB by default) to rank 1 through weft (a 2-rank
// group from ProcessGroup::from_environment, Group::send/recv), and the
// same bytes through a plain TCP stream between the same two processes
// (net/stream.h: non-blocking, waiting in poll(2) when the socket is full
// or empty, as the fabric does), rounds interleaved (the order alternating);
// rank 0 prints the median of each and their ratio, weft / plain. Run it as two
// ranks of a TCP group:
//
//   weft-sim launch --fabric=tcp --ranks=2 -- tcp_sendrecv --bytes=64M
//
// One round of either path: rank 1 fills its buffer with the complement of
// the round's pattern, starts its clock and says "ready" on the plain
// stream; rank 0, which has filled its buffer with the pattern, sends on
// that word; rank 1 stops its clock when the whole message is in, then
// checks every byte. A weft round ends with an untimed barrier. Exit status 0
// when every byte arrived right, 1 when one did not or a transfer failed, 2 for
// bad flags or a group that is not two ranks.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "bench/tcp_compare/sendrecv_rounds.h"
#include "fabric/clock.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/stream.h"
#include "startup/process_group.h"
#include "tools/cli/byte_size.h"
#include "tools/cli/exit_status.h"

ABSL_FLAG(std::string, bytes, "64M", "message size (K, M, G suffixes)");
ABSL_FLAG(int, rounds, 10, "timed rounds of each path, after one warm-up");
ABSL_FLAG(std::string, plain_address, "127.0.0.1",
          "numeric IPv4 or IPv6 address rank 1 listens on for the plain "
          "stream");
ABSL_FLAG(int, socket_buffer_bytes, 0,
          "SO_SNDBUF/SO_RCVBUF of the plain stream; 0 keeps the kernel's "
          "auto-tuning, as the TCP fabric does by default");
ABSL_FLAG(int, timeout_s, 60, "deadline of every transfer, seconds");
ABSL_FLAG(std::string, json, "", "rank 0 also writes the results here");

namespace weft::bench {
namespace {

using tools::cli::kExitBadInput;
using tools::cli::kExitFailed;
constexpr int kMaxRounds = 10'000;

absl::StatusOr<RoundsConfig> config_from_flags() {
  RoundsConfig c;
  absl::StatusOr<uint64_t> bytes = tools::cli::parse_byte_size(
      "bytes", absl::GetFlag(FLAGS_bytes), uint64_t{1} << 30);
  if (!bytes.ok()) return bytes.status();
  if (*bytes == 0) return absl::InvalidArgumentError("--bytes must be > 0");
  c.bytes = *bytes;
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const int timeout_s = absl::GetFlag(FLAGS_timeout_s);
  if (rounds < 1 || rounds > kMaxRounds || timeout_s < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--rounds=%d --timeout_s=%d: give 1..%d rounds and a deadline of at "
        "least 1 s",
        rounds, timeout_s, kMaxRounds));
  }
  c.rounds = static_cast<uint32_t>(rounds);
  c.deadline_ns = timeout_s * kNsPerS;
  c.socket_buffer_bytes = absl::GetFlag(FLAGS_socket_buffer_bytes);
  return c;
}

// The plain stream between the two ranks: rank 1 listens, says where
// through the group's side channel, rank 0 connects; the same socket
// options (net::tune_connection) on both ends as the TCP fabric's.
absl::StatusOr<net::Socket> plain_stream(ProcessGroup& pg,
                                         const RoundsConfig& c) {
  const std::string ip = absl::GetFlag(FLAGS_plain_address);
  absl::StatusOr<net::SocketAddress> address =
      net::SocketAddress::numeric(ip, 0);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--plain_address: %s", address.status().message()));
  }
  const WallClock clock;
  const TimeNs deadline_ns = deadline_after(clock.now_ns(), c.deadline_ns);
  net::Socket listener;
  uint16_t port = 0;
  if (pg.config().rank == 1) {
    absl::StatusOr<net::Socket> l = net::listen_on(*address, 1);
    absl::StatusOr<net::SocketAddress> bound =
        l.ok() ? net::SocketAddress::bound_to(l->fd()) : l.status();
    if (!bound.ok()) return bound.status();
    listener = *std::move(l);
    port = bound->port();
  }
  const uint8_t mine[2] = {static_cast<uint8_t>(port >> 8),
                           static_cast<uint8_t>(port & 0xff)};
  absl::StatusOr<std::vector<std::vector<uint8_t>>> all =
      pg.bootstrap().all_gather(mine, c.deadline_ns);
  if (!all.ok()) return all.status();
  if (pg.config().rank == 1) {
    absl::StatusOr<net::Accepted> a =
        net::accept_until(listener.fd(), deadline_ns, clock);
    if (!a.ok()) return a.status();
    if (absl::Status s = net::tune_connection(a->socket.fd(), a->peer,
                                              c.socket_buffer_bytes);
        !s.ok()) {
      return s;
    }
    return std::move(a->socket);
  }
  const std::vector<uint8_t>& theirs = (*all)[1];
  if (theirs.size() != 2) {
    return absl::InternalError("rank 1 sent no plain stream port");
  }
  const net::SocketAddress to = net::SocketAddress::from_gid(
      address->gid(), static_cast<uint16_t>(theirs[0] << 8 | theirs[1]));
  return net::connect_once(to, c.socket_buffer_bytes, deadline_ns, clock);
}

int run_main() {
  absl::StatusOr<RoundsConfig> c = config_from_flags();
  if (!c.ok()) {
    std::fprintf(stderr, "tcp_sendrecv: %s\n", c.status().ToString().c_str());
    return tools::cli::kExitBadInput;
  }
  absl::StatusOr<std::unique_ptr<ProcessGroup>> pg =
      ProcessGroup::from_environment();
  if (!pg.ok()) {
    std::fprintf(stderr, "tcp_sendrecv: %s\n", pg.status().ToString().c_str());
    return tools::cli::kExitBadInput;
  }
  const uint32_t rank = (*pg)->config().rank;
  if ((*pg)->config().size != 2) {
    std::fprintf(stderr,
                 "tcp_sendrecv: the group has %u ranks; start exactly 2 "
                 "(weft-sim launch --fabric=tcp --ranks=2)\n",
                 (*pg)->config().size);
    return tools::cli::kExitBadInput;
  }
  absl::StatusOr<net::Socket> stream = plain_stream(**pg, *c);
  if (!stream.ok()) {
    std::fprintf(stderr, "tcp_sendrecv: rank %u: %s\n", rank,
                 stream.status().ToString().c_str());
    return tools::cli::kExitFailed;
  }
  absl::StatusOr<RoundsResult> result =
      run_rounds((*pg)->group(), *stream, rank, *c);
  if (!result.ok()) {
    std::fprintf(stderr, "tcp_sendrecv: rank %u: %s\n", rank,
                 result.status().ToString().c_str());
    return tools::cli::kExitFailed;
  }
  if (rank == 0) {
    std::fputs(format_rounds(*c, *result).c_str(), stdout);
    const std::string json = absl::GetFlag(FLAGS_json);
    if (!json.empty()) {
      if (absl::Status s = write_rounds_json(json, *c, *result); !s.ok()) {
        std::fprintf(stderr, "tcp_sendrecv: %s\n", s.ToString().c_str());
        return tools::cli::kExitFailed;
      }
    }
  }
  return result->wrong_bytes == 0 ? 0 : tools::cli::kExitFailed;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "weft's TCP fabric against a plain TCP stream, two processes: "
      "weft-sim launch --fabric=tcp --ranks=2 -- tcp_sendrecv");
  absl::ParseCommandLine(argc, argv);
  return weft::bench::run_main();
}
