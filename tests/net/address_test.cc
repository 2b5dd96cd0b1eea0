// net/address.h: the one text form of TCP addresses ("host:port",
// "[ipv6]:port"), what each refusal tells the user to write, numeric
// parsing, name resolution without a resolver for "localhost", and the
// GID form a Destination carries.
#include "net/address.h"

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::net {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string message(const absl::Status& s) { return std::string(s.message()); }

TEST(SplitHostPort, ReadsIpv4NamesAndBracketedIpv6) {
  const struct {
    const char* text;
    HostPort want;
  } cases[] = {
      {"192.168.1.10:5000", {"192.168.1.10", 5000}},
      {"localhost:0", {"localhost", 0}},
      {"mac-1.local:65535", {"mac-1.local", 65535}},
      {"[::1]:5000", {"::1", 5000}},
      {"[fe80::1:2]:7", {"fe80::1:2", 7}},
      {"[::ffff:10.0.0.1]:80", {"::ffff:10.0.0.1", 80}},
  };
  for (const auto& c : cases) {
    absl::StatusOr<HostPort> hp = split_host_port(c.text);
    ASSERT_TRUE(hp.ok()) << c.text << ": " << hp.status();
    EXPECT_EQ(*hp, c.want) << c.text;
    EXPECT_EQ(hp->to_string(), c.text);
  }
}

// Each refusal quotes the text and says what to write instead.
TEST(SplitHostPort, RefusalsSayWhatToWrite) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"::1:5000", "write \"[::1]:5000\" if 5000 is the port"},
      {"[::1]", "no port after the brackets: write \"[::1]:port\""},
      {"[zz]:1", "\"zz\" between the brackets is not a numeric IPv6 address"},
      {"[10.0.0.1]:1", "brackets hold only an IPv6 address"},
      {"[fe80::1%en0]:1", "without a zone index"},
      {"[::1:5000", "an opening bracket without its closing one"},
      {"[::1]5000", "\"5000\" after the brackets is not a colon and a port"},
      {"[::1]:99999", "is not a colon and a port from 0 to 65535"},
      {"host", "no port"},
      {":5000", "no host before the colon"},
      {"host:", "the port \"\" is not a number from 0 to 65535"},
      {"host:65536", "the port \"65536\""},
      {"host:-1", "the port \"-1\""},
      {"host:1x", "the port \"1x\""},
      {"", "no port"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<HostPort> hp = split_host_port(c.text);
    ASSERT_FALSE(hp.ok()) << c.text;
    EXPECT_EQ(hp.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        message(hp.status()),
        AllOf(HasSubstr(std::string("'") + c.text + "'"), HasSubstr(c.says),
              HasSubstr("\"[ipv6]:port\" (e.g. \"[::1]:5000\")")))
        << c.text;
  }
}

TEST(SocketAddress, ParsesNumericIpv4AndIpv6) {
  absl::StatusOr<SocketAddress> v4 = SocketAddress::parse("127.0.0.1:5000");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->port(), 5000);
  EXPECT_EQ(v4->ip(), "127.0.0.1");
  EXPECT_EQ(v4->to_string(), "127.0.0.1:5000");
  absl::StatusOr<SocketAddress> v6 = SocketAddress::parse("[0:0::1]:6000");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->family(), AF_INET6);
  EXPECT_EQ(v6->to_string(), "[::1]:6000");  // canonical
  EXPECT_EQ(*v6, *SocketAddress::parse("[::1]:6000"));
  EXPECT_FALSE(*v6 == *SocketAddress::parse("[::1]:6001"));
  EXPECT_EQ(SocketAddress().to_string(), "(no address)");
}

// The fabric listens exactly where configured: no names, and the message
// asks for the numeric form.
TEST(SocketAddress, ParseRefusesNamesSayingSo) {
  absl::StatusOr<SocketAddress> name = SocketAddress::parse("localhost:5000");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(name.status()),
              AllOf(HasSubstr("'localhost:5000' is not a numeric TCP address"),
                    HasSubstr("host names are not looked up here"),
                    HasSubstr("write \"ip:port\"")));
  absl::StatusOr<SocketAddress> bare = SocketAddress::parse("::1:5000");
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(message(bare.status()), HasSubstr("\"[::1]:5000\""));
  EXPECT_FALSE(SocketAddress::parse("300.1.1.1:5").ok());
  EXPECT_FALSE(SocketAddress::numeric("1.2.3", 5).ok());
}

TEST(SocketAddress, ResolvesLocalhostAndNumericWithoutAResolver) {
  absl::StatusOr<SocketAddress> local =
      SocketAddress::resolve({"localhost", 7000});
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->to_string(), "127.0.0.1:7000");
  absl::StatusOr<SocketAddress> v6 = SocketAddress::resolve({"::1", 7001});
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->to_string(), "[::1]:7001");
}

// A loopback name other than "localhost" from /etc/hosts ("" when none),
// so getaddrinfo answers from the file and no query leaves the machine.
std::pair<std::string, std::string> loopback_name_in_hosts_file() {
  std::ifstream hosts("/etc/hosts");
  std::string line;
  while (std::getline(hosts, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string ip, name;
    if (!(words >> ip)) continue;
    if (ip.rfind("127.", 0) != 0 && ip != "::1") continue;
    while (words >> name) {
      if (name != "localhost") return {name, ip};
    }
  }
  return {};
}

TEST(SocketAddress, ResolvesNamesThroughGetaddrinfo) {
  const auto [name, ip] = loopback_name_in_hosts_file();
  if (name.empty()) {
    GTEST_SKIP() << "/etc/hosts names no loopback address other than "
                    "localhost, and no other name resolves without a query "
                    "leaving this machine";
  }
  absl::StatusOr<SocketAddress> a = SocketAddress::resolve({name, 4242});
  ASSERT_TRUE(a.ok()) << name << ": " << a.status();
  EXPECT_EQ(*a, *SocketAddress::numeric(ip, 4242)) << name;
}

TEST(SocketAddress, GidRoundTripsBothFamilies) {
  const SocketAddress v4 = *SocketAddress::parse("10.1.2.3:99");
  const std::array<uint8_t, 16> mapped = {0, 0, 0,    0,    0,  0, 0, 0,
                                          0, 0, 0xff, 0xff, 10, 1, 2, 3};
  EXPECT_EQ(v4.gid(), mapped);
  EXPECT_EQ(SocketAddress::from_gid(mapped, 99), v4);
  const SocketAddress v6 = *SocketAddress::parse("[fe80::5]:100");
  EXPECT_EQ(SocketAddress::from_gid(v6.gid(), 100), v6);
  EXPECT_EQ(SocketAddress::from_gid(v6.gid(), 100).family(), AF_INET6);
}

}  // namespace
}  // namespace weft::net
