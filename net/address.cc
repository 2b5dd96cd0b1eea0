#include "net/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"

namespace weft::net {
namespace {

constexpr uint16_t kMaxPort = 65535;
constexpr uint8_t kIpv4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// What an address in text may hold: any host (the side channel resolves
// names) or only an IP (the fabric listens exactly where configured).
enum class Hosts { kNamesToo, kNumericOnly };

absl::Status bad_text(std::string_view text, Hosts hosts,
                      std::string_view why) {
  if (hosts == Hosts::kNamesToo) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not host:port: %s; write \"host:port\" with an IPv4 "
        "address or host name (e.g. \"192.168.1.10:5000\") or "
        "\"[ipv6]:port\" (e.g. \"[::1]:5000\")",
        text, why));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' is not a numeric TCP address: %s; write \"ip:port\" (e.g. "
      "\"192.168.1.10:5000\") or \"[ipv6]:port\" (e.g. \"[::1]:5000\")",
      text, why));
}

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > kMaxPort) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

bool is_ipv6(const std::string& host) {
  in6_addr bytes{};
  return inet_pton(AF_INET6, host.c_str(), &bytes) == 1;
}

// "[v6]:port" (text starts with '[').
absl::StatusOr<HostPort> split_bracketed(std::string_view text, Hosts hosts) {
  const size_t close = text.find(']');
  if (close == std::string_view::npos) {
    return bad_text(text, hosts, "an opening bracket without its closing one");
  }
  HostPort out{std::string(text.substr(1, close - 1)), 0};
  if (!is_ipv6(out.host)) {
    return bad_text(
        text, hosts,
        absl::StrFormat("\"%s\" between the brackets is not a numeric IPv6 "
                        "address (brackets hold only an IPv6 address, "
                        "without a zone index)",
                        out.host));
  }
  const std::string_view rest = text.substr(close + 1);
  if (rest.empty()) {
    return bad_text(text, hosts,
                    absl::StrFormat("no port after the brackets: write "
                                    "\"[%s]:port\"",
                                    out.host));
  }
  std::optional<uint16_t> port =
      rest.front() == ':' ? parse_port(rest.substr(1)) : std::nullopt;
  if (!port.has_value()) {
    return bad_text(text, hosts,
                    absl::StrFormat("\"%s\" after the brackets is not a colon "
                                    "and a port from 0 to %u",
                                    rest, kMaxPort));
  }
  out.port = *port;
  return out;
}

absl::StatusOr<HostPort> split(std::string_view text, Hosts hosts) {
  if (!text.empty() && text.front() == '[') {
    return split_bracketed(text, hosts);
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return bad_text(text, hosts, "no port");
  }
  const std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (host.find(':') != std::string::npos) {
    // "::1:5000": IPv6 ::1 and port 5000, or ::1:5000 with no port.
    return bad_text(
        text, hosts,
        absl::StrFormat("an IPv6 address needs brackets: write \"[%s]:%s\" "
                        "if %s is the port",
                        host, port_text, port_text));
  }
  if (host.empty()) return bad_text(text, hosts, "no host before the colon");
  std::optional<uint16_t> port = parse_port(port_text);
  if (!port.has_value()) {
    return bad_text(text, hosts,
                    absl::StrFormat("the port \"%s\" is not a number from 0 "
                                    "to %u",
                                    port_text, kMaxPort));
  }
  return HostPort{host, *port};
}

}  // namespace

std::string HostPort::to_string() const {
  if (host.find(':') != std::string::npos) {
    return absl::StrFormat("[%s]:%u", host, port);
  }
  return absl::StrFormat("%s:%u", host, port);
}

absl::StatusOr<HostPort> split_host_port(std::string_view text) {
  return split(text, Hosts::kNamesToo);
}

absl::StatusOr<SocketAddress> SocketAddress::parse(std::string_view text) {
  absl::StatusOr<HostPort> where = split(text, Hosts::kNumericOnly);
  if (!where.ok()) return where.status();
  absl::StatusOr<SocketAddress> a = numeric(where->host, where->port);
  if (!a.ok()) {
    return bad_text(text, Hosts::kNumericOnly,
                    absl::StrFormat("\"%s\" is not a numeric IP address "
                                    "(host names are not looked up here)",
                                    where->host));
  }
  return a;
}

absl::StatusOr<SocketAddress> SocketAddress::numeric(std::string_view host,
                                                     uint16_t port) {
  const std::string h(host);
  in6_addr bytes{};
  if (inet_pton(AF_INET, h.c_str(), &bytes) == 1) {
    return of(AF_INET, &bytes, port);
  }
  if (inet_pton(AF_INET6, h.c_str(), &bytes) == 1) {
    return of(AF_INET6, &bytes, port);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "\"%s\" is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, ::1)",
      host));
}

absl::StatusOr<SocketAddress> SocketAddress::resolve(const HostPort& where) {
  if (where.host == "localhost") {
    const in_addr loopback{htonl(INADDR_LOOPBACK)};
    return of(AF_INET, &loopback, where.port);
  }
  if (absl::StatusOr<SocketAddress> a = numeric(where.host, where.port);
      a.ok()) {
    return a;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(where.host.c_str(), nullptr, &hints, &found);
  std::optional<SocketAddress> first;
  for (const addrinfo* a = rc == 0 ? found : nullptr; a && !first;
       a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      first = of(AF_INET,
                 &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr,
                 where.port);
    } else if (a->ai_family == AF_INET6) {
      first = of(AF_INET6,
                 &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr,
                 where.port);
    }
  }
  if (found != nullptr) freeaddrinfo(found);
  if (first.has_value()) return *first;
  return absl::UnavailableError(absl::StrFormat(
      "host \"%s\" does not resolve to an IPv4 or IPv6 address (%s); write "
      "its IP address instead, or fix the name or this machine's resolver "
      "(/etc/hosts, DNS)",
      where.host, rc != 0 ? gai_strerror(rc) : "no addresses"));
}

SocketAddress SocketAddress::from_gid(const std::array<uint8_t, 16>& gid,
                                      uint16_t port) {
  if (std::memcmp(gid.data(), kIpv4Mapped, sizeof(kIpv4Mapped)) == 0) {
    return of(AF_INET, gid.data() + sizeof(kIpv4Mapped), port);
  }
  return of(AF_INET6, gid.data(), port);
}

SocketAddress SocketAddress::of(int family, const void* bytes, uint16_t port) {
  SocketAddress a;
  a.storage_.ss_family = static_cast<sa_family_t>(family);
  const Fields f = a.fields();
  *f.port = htons(port);
  std::memcpy(f.ip, bytes, f.ip_bytes);
  a.length_ = f.length;
  return a;
}

SocketAddress::Fields SocketAddress::fields() const {
  // Writable only through of(), on an address of its own.
  auto& s = const_cast<sockaddr_storage&>(storage_);
  if (s.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&s);
    return {&in6->sin6_addr, sizeof(in6->sin6_addr), &in6->sin6_port,
            sizeof(sockaddr_in6)};
  }
  auto* in4 = reinterpret_cast<sockaddr_in*>(&s);
  return {&in4->sin_addr, sizeof(in4->sin_addr), &in4->sin_port,
          sizeof(sockaddr_in)};
}

absl::StatusOr<SocketAddress> SocketAddress::bound_to(int fd) {
  return named(fd, &getsockname, "getsockname");
}

absl::StatusOr<SocketAddress> SocketAddress::peer_of(int fd) {
  return named(fd, &getpeername, "getpeername");
}

absl::StatusOr<SocketAddress> SocketAddress::named(int fd, NameCall call,
                                                   const char* what) {
  SocketAddress a;
  a.length_ = sizeof(a.storage_);
  if (call(fd, reinterpret_cast<sockaddr*>(&a.storage_), &a.length_) != 0) {
    return absl::UnavailableError(
        absl::StrFormat("%s failed: %s", what, errno_text(errno)));
  }
  return a;
}

uint16_t SocketAddress::port() const { return ntohs(*fields().port); }

std::array<uint8_t, 16> SocketAddress::gid() const {
  std::array<uint8_t, 16> g{};
  const Fields f = fields();
  const size_t prefix = g.size() - f.ip_bytes;  // 12 for IPv4, else 0
  std::memcpy(g.data(), kIpv4Mapped, prefix);
  std::memcpy(g.data() + prefix, f.ip, f.ip_bytes);
  return g;
}

std::string SocketAddress::ip() const {
  if (family() != AF_INET && family() != AF_INET6) return "";
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family(), fields().ip, text, sizeof(text));
  return text;
}

std::string SocketAddress::to_string() const {
  if (family() == AF_INET6) return absl::StrFormat("[%s]:%u", ip(), port());
  if (family() != AF_INET) return "(no address)";
  return absl::StrFormat("%s:%u", ip(), port());
}

bool SocketAddress::operator==(const SocketAddress& other) const {
  return family() == other.family() && port() == other.port() &&
         gid() == other.gid();
}

}  // namespace weft::net
