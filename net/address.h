// Where a TCP socket listens or connects, in weft's one text form for every
// part that speaks TCP (the TCP fabric, the side channel, the benchmarks):
// "host:port", with an IPv6 address in brackets ("[::1]:5000") so the port
// is never in doubt. The fabric reads numeric addresses only
// (SocketAddress::parse); the side channel also takes host names
// (SocketAddress::resolve). Compiles on Linux and macOS.
#ifndef WEFT_NET_ADDRESS_H_
#define WEFT_NET_ADDRESS_H_

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace weft::net {

// "host:port" split in two. `host` is an IPv4 address, a host name, or an
// IPv6 address (written in brackets, held here without them).
struct HostPort {
  std::string host;
  uint16_t port = 0;

  // "10.0.0.1:5000", "mac-1.local:5000", "[::1]:5000".
  std::string to_string() const;
  bool operator==(const HostPort&) const = default;
};

// Splits "host:port" or "[ipv6]:port" (port 0..65535). InvalidArgument
// quoting `text` and saying what to write when the port is missing or not a
// number, the host is empty, an IPv6 address lacks its brackets ("::1:5000":
// is 5000 the port or part of the address?), or the brackets hold no
// numeric IPv6 address (no zone index: "[fe80::1%en0]" is refused).
absl::StatusOr<HostPort> split_host_port(std::string_view text);

// An IPv4 or IPv6 socket address.
class SocketAddress {
 public:
  SocketAddress() = default;
  // A numeric "ip:port" or "[ipv6]:port" (split_host_port's forms, no host
  // names: a listen address is then exactly what was configured).
  // InvalidArgument saying which forms are read.
  static absl::StatusOr<SocketAddress> parse(std::string_view text);
  // `host` as a numeric IPv4 or IPv6 address (no brackets) and `port`.
  // InvalidArgument when it is not one.
  static absl::StatusOr<SocketAddress> numeric(std::string_view host,
                                               uint16_t port);
  // `where` as an address: numeric, "localhost" (127.0.0.1 without asking a
  // resolver, so a machine without one still runs a group on itself), or
  // a host name looked up with getaddrinfo for IPv4 and IPv6 alike, the
  // system's preferred answer first (bounded by the resolver's own
  // timeouts). Unavailable naming the host when it does not resolve.
  static absl::StatusOr<SocketAddress> resolve(const HostPort& where);
  // From a Destination's GID (an IPv4-mapped GID is IPv4) and port.
  static SocketAddress from_gid(const std::array<uint8_t, 16>& gid,
                                uint16_t port);
  // The address `fd` is bound to (the port the system chose for port 0),
  // and the address of its peer.
  static absl::StatusOr<SocketAddress> bound_to(int fd);
  static absl::StatusOr<SocketAddress> peer_of(int fd);

  // AF_INET, AF_INET6, or AF_UNSPEC for a default-constructed address.
  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  // The IP alone: "127.0.0.1", "::1".
  std::string ip() const;
  // IPv4 as ::ffff:a.b.c.d, IPv6 as is: what a Destination carries.
  std::array<uint8_t, 16> gid() const;
  // "127.0.0.1:5000", "[::1]:5000"; "(no address)" when default-constructed.
  std::string to_string() const;
  // The same family, IP and port.
  bool operator==(const SocketAddress& other) const;

  const sockaddr* get() const {
    return reinterpret_cast<const sockaddr*>(&storage_);
  }
  socklen_t length() const { return length_; }

 private:
  using NameCall = int (*)(int, sockaddr*, socklen_t*);
  // getsockname or getpeername into a new address.
  static absl::StatusOr<SocketAddress> named(int fd, NameCall call,
                                             const char* what);
  // An address of `family` whose IP is the `bytes` (4 or 16 of them).
  static SocketAddress of(int family, const void* bytes, uint16_t port);
  // Where the IP and the port (network order) sit for this family; IPv4's
  // for a default-constructed address.
  struct Fields {
    void* ip;
    size_t ip_bytes;
    uint16_t* port;
    socklen_t length;
  };
  Fields fields() const;

  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

}  // namespace weft::net

#endif  // WEFT_NET_ADDRESS_H_
