// The ring hostfile (rendezvous/tcp_hosts.h): what it accepts (IPv4, IPv6
// in brackets, a string row), each refusal naming the file, the rank's row
// and the entry, the full mesh it implies and the default coordinator.
#include "rendezvous/tcp_hosts.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string message(const absl::Status& s) { return std::string(s.message()); }

// The refusal of `json` as hosts.json: InvalidArgument, its message.
std::string refusal(const std::string& json) {
  absl::StatusOr<TcpHosts> hosts = parse_tcp_hosts(json, "hosts.json");
  EXPECT_FALSE(hosts.ok()) << json;
  if (hosts.ok()) return "";
  EXPECT_EQ(hosts.status().code(), absl::StatusCode::kInvalidArgument);
  return message(hosts.status());
}

TEST(TcpAddress, ReadsIpv4AndBracketedIpv6) {
  absl::StatusOr<TcpAddress> v4 = parse_tcp_address("192.168.1.10:5000");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->ip, "192.168.1.10");
  EXPECT_EQ(v4->port, 5000);
  EXPECT_FALSE(v4->ipv6);
  absl::StatusOr<TcpAddress> v6 = parse_tcp_address("[fe80::1]:65535");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->ip, "fe80::1");
  EXPECT_EQ(v6->port, 65535);
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(format_tcp_address(*v6), "[fe80::1]:65535");
  EXPECT_EQ(format_tcp_address(*v4), "192.168.1.10:5000");
  // The canonical form: one address, one spelling.
  EXPECT_EQ(parse_tcp_address("[0:0::1]:5")->ip, "::1");
}

TEST(TcpAddress, RefusesWhatItCannotListenOn) {
  // Unbracketed IPv6 is ambiguous: the message shows the bracketed form.
  absl::StatusOr<TcpAddress> bare = parse_tcp_address("::1:5000");
  EXPECT_EQ(bare.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(bare.status()), HasSubstr("\"[::1]:5000\""));
  absl::StatusOr<TcpAddress> name = parse_tcp_address("mac1.local:5000");
  EXPECT_THAT(message(name.status()),
              HasSubstr("host names are not looked up here"));
  for (const char* text :
       {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:50x",
        "[::1:5000", "[zz::1]:5000", "300.1.1.1:5000", ":5000"}) {
    absl::StatusOr<TcpAddress> a = parse_tcp_address(text);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(message(a.status()), HasSubstr(text));
  }
}

TEST(TcpHostsFile, ReadsRowsInRankOrder) {
  absl::StatusOr<TcpHosts> hosts = parse_tcp_hosts(
      R"([["10.0.0.1:5000", "10.0.1.1:5000"],
          ["10.0.0.2:5000", "10.0.1.2:5000"],
          ["[::1]:6000", "[::1]:6001"]])",
      "hosts.json");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_THAT(*hosts, ElementsAre(ElementsAre("10.0.0.1:5000", "10.0.1.1:5000"),
                                  ElementsAre("10.0.0.2:5000", "10.0.1.2:5000"),
                                  ElementsAre("[::1]:6000", "[::1]:6001")));
}

TEST(TcpHostsFile, AStringRowIsOneAddressAsMlxReadsIt) {
  absl::StatusOr<TcpHosts> hosts =
      parse_tcp_hosts(R"(["127.0.0.1:5000", ["127.0.0.1:5001"]])", "h.json");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_THAT(*hosts, ElementsAre(ElementsAre("127.0.0.1:5000"),
                                  ElementsAre("127.0.0.1:5001")));
}

TEST(TcpHostsFile, RefusesWhatIsNotAListOfRows) {
  EXPECT_THAT(refusal("not json"), HasSubstr("hosts.json is not JSON"));
  EXPECT_THAT(refusal(R"({"hosts": []})"),
              AllOf(HasSubstr("hosts.json holds a JSON object"),
                    HasSubstr("weft-devices tcp-hostfile")));
  EXPECT_THAT(refusal("[]"), HasSubstr("hosts.json lists 0 ranks"));
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], 7])"),
              HasSubstr("hosts.json: rank 1's row is number"));
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], ["127.0.0.1:5001", 3]])"),
              HasSubstr("hosts.json: rank 1's entry 1 is number"));
}

TEST(TcpHostsFile, RefusalsNameTheFileTheRowAndTheEntry) {
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], []])"),
              HasSubstr("hosts.json: rank 1's row is empty"));
  EXPECT_THAT(
      refusal(R"([["127.0.0.1:5000", "127.0.0.1:5001"],
                           ["127.0.0.1:5002", "x:1"]])"),
      AllOf(HasSubstr("hosts.json: rank 1's entry 1"), HasSubstr("'x:1'")));
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], ["::1:5001"]])"),
              AllOf(HasSubstr("hosts.json: rank 1's entry 0"),
                    HasSubstr("write \"[::1]:5001\"")));
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], ["127.0.0.1:0"]])"),
              AllOf(HasSubstr("hosts.json: rank 1's entry 0 '127.0.0.1:0'"),
                    HasSubstr("port 0")));
}

TEST(TcpHostsFile, EveryRankNeedsTheSameCableCount) {
  EXPECT_THAT(
      refusal(R"([["127.0.0.1:5000", "127.0.0.1:5001"], ["127.0.0.1:5002"]])"),
      AllOf(HasSubstr("hosts.json: rank 0 lists 2 addresses but rank 1 "
                      "lists 1"),
            HasSubstr("one cable per address index")));
}

TEST(TcpHostsFile, RefusesAnAddressTwiceInAnyForm) {
  EXPECT_THAT(refusal(R"([["127.0.0.1:5000"], ["127.0.0.1:5000"]])"),
              HasSubstr("hosts.json: rank 1's entry 0 '127.0.0.1:5000' is the "
                        "same address as rank 0's entry 0"));
  // The same IPv6 address written two ways.
  EXPECT_THAT(refusal(R"([["[::1]:5000", "[0:0::1]:5000"]])"),
              HasSubstr("rank 0's entry 1 '[0:0::1]:5000' is the same "
                        "address as rank 0's entry 0"));
}

TEST(TcpHostsFile, RefusesMoreCablesThanAPairTakes) {
  std::string row;
  for (uint32_t c = 0; c <= Topology::kMaxCables; ++c) {
    row += (c ? "," : "") + std::string("\"127.0.0.1:") +
           std::to_string(5000 + c) + "\"";
  }
  EXPECT_THAT(refusal("[[" + row + "]]"),
              HasSubstr("rank 0 lists 9 addresses, more than the 8 cables"));
}

TEST(TcpHostsFile, LoadNamesAMissingFile) {
  absl::StatusOr<TcpHosts> hosts = load_tcp_hosts("/nonexistent/hosts.json");
  EXPECT_EQ(hosts.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(hosts.status()), HasSubstr("/nonexistent/hosts.json"));
}

TEST(TcpMeshTopology, EachCellIsTheRowsOwnAddresses) {
  const TcpHosts hosts = {{"10.0.0.1:5000", "10.0.1.1:5000"},
                          {"10.0.0.2:5000", "10.0.1.2:5000"},
                          {"10.0.0.3:5000", "10.0.1.3:5000"}};
  const Topology t = tcp_mesh_topology(hosts);
  ASSERT_EQ(t.ranks(), 3u);
  EXPECT_TRUE(t.is_full_mesh());
  for (uint32_t i = 0; i < 3; ++i) {
    for (uint32_t j = 0; j < 3; ++j) {
      if (i == j) {
        EXPECT_FALSE(t.connected(i, j));
      } else {
        EXPECT_EQ(t.devices(i, j), hosts[i]) << i << "," << j;
      }
    }
  }
}

TEST(TcpCoordinator, DefaultIsOneAboveTheHighestPortOnRankZerosIp) {
  // Rank 0's IP 10.0.0.1 carries ports 5000 and (on rank 2's row, the same
  // machine) 5007; 10.0.0.2's 9000 is another machine's.
  const TcpHosts hosts = {
      {"10.0.0.1:5000"}, {"10.0.0.2:9000"}, {"10.0.0.1:5007"}};
  absl::StatusOr<std::string> c = default_tcp_coordinator(hosts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, "10.0.0.1:5008");
  absl::StatusOr<std::string> v6 =
      default_tcp_coordinator({{"[::1]:5000"}, {"[0::1]:5003"}});
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(*v6, "[::1]:5004");
}

TEST(TcpCoordinator, NoPortLeftAboveIsAnError) {
  absl::StatusOr<std::string> c =
      default_tcp_coordinator({{"127.0.0.1:65535"}, {"127.0.0.1:5000"}});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(c.status()), HasSubstr("WEFT_COORDINATOR"));
}

}  // namespace
}  // namespace weft
