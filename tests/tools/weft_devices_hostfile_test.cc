// `weft-devices tcp-hostfile`, the built binary: mlx.launch's hostfile in,
// the ring hostfile out, with mlx.launch's port assignment (the starting
// port, one more for each further address over every host's IPs and
// connections in order), read back by weft's own hostfile reader; each
// refusal exits 2 naming what to fix.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/tcp_hosts.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

ToolResult convert(const std::string& hosts_json, const std::string& flags) {
  const std::string path = write_scratch("hosts.json", hosts_json);
  return run_tool(WEFT_DEVICES_PATH,
                  "tcp-hostfile --from=" + path + " " + flags);
}

// The rows mlx.launch's ring launcher makes: for each host, each IP, each
// connection, "ip:port" with the port counting up from `start`.
TcpHosts mlx_rows(const std::vector<std::vector<std::string>>& ips,
                  uint32_t start, uint32_t per_ip) {
  TcpHosts rows;
  uint32_t port = start;
  for (const std::vector<std::string>& host : ips) {
    rows.emplace_back();
    for (const std::string& ip : host) {
      for (uint32_t c = 0; c < per_ip; ++c) {
        rows.back().push_back(absl::StrFormat("%s:%u", ip, port++));
      }
    }
  }
  return rows;
}

TcpHosts read_back(const std::string& out) {
  absl::StatusOr<TcpHosts> hosts = parse_tcp_hosts(out, "stdout");
  EXPECT_TRUE(hosts.ok()) << hosts.status() << "\n" << out;
  return hosts.ok() ? *hosts : TcpHosts{};
}

TEST(WeftDevicesTcpHostfile, FollowsMlxLaunchsPorts) {
  const ToolResult r = convert(
      R"([{"ssh": "mac1", "ips": ["192.168.1.10", "10.0.0.1"]},
          {"ssh": "mac2", "ips": ["192.168.1.11", "10.0.0.2"]},
          {"ssh": "mac3", "ips": ["192.168.1.12", "10.0.0.3"]}])",
      "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_back(r.out), mlx_rows({{"192.168.1.10", "10.0.0.1"},
                                        {"192.168.1.11", "10.0.0.2"},
                                        {"192.168.1.12", "10.0.0.3"}},
                                       32323, 1));
  // json.dumps' layout, as mlx.launch writes MLX_HOSTFILE.
  EXPECT_THAT(r.out, AllOf(HasSubstr("[[\"192.168.1.10:32323\", "),
                           HasSubstr("\"], [\"")));
}

TEST(WeftDevicesTcpHostfile, PortAndCablesAndTheObjectForm) {
  const ToolResult r = convert(
      R"({"backend": "ring", "envs": [],
          "hosts": [{"ssh": "a", "ips": ["127.0.0.1"]},
                    {"ssh": "b", "ips": ["fe80::2"]}]})",
      "--port=5000 --cables=3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_back(r.out),
            mlx_rows({{"127.0.0.1"}, {"[fe80::2]"}}, 5000, 3));
}

TEST(WeftDevicesTcpHostfile, RefusesWhatTheRingCannotUse) {
  struct Case {
    const char* json;
    const char* flags;
    const char* says;
  };
  const Case cases[] = {
      {R"([{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "mac2"}])", "",
       "host 1 (\"mac2\") has no \"ips\""},
      {R"([{"ssh": "a", "ips": ["mac1.local"]}])", "",
       "host 0 (\"a\")'s ip \"mac1.local\" is not a numeric"},
      {R"([{"ssh": "a", "ips": ["10.0.0.1", "10.0.1.1"]},
           {"ssh": "b", "ips": ["10.0.0.2"]}])",
       "", "rank 0 lists 2 addresses but rank 1 lists 1"},
      {R"([{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "b", "ips": ["10.0.0.2"]}])",
       "--port=65535", "past port 65535"},
      {R"({"hosts": 3})", "", "is not an mlx.launch hostfile"},
      {"[", "", "is not JSON"},
      {R"([{"ssh": "a", "ips": ["10.0.0.1"]}])", "--cables=0",
       "the cables 1..8"},
      {R"([{"ssh": "a", "ips": ["10.0.0.1"]}])", "--json",
       "--json is not a flag of weft-devices tcp-hostfile"},
  };
  for (const Case& c : cases) {
    const ToolResult r = convert(c.json, c.flags);
    EXPECT_EQ(r.code, 2) << c.json;
    EXPECT_THAT(r.err, AllOf(HasSubstr("weft-devices: "), HasSubstr(c.says)))
        << c.json;
    EXPECT_EQ(r.out, "") << c.json;
  }
}

TEST(WeftDevicesTcpHostfile, NeedsItsInput) {
  ToolResult r = run_tool(WEFT_DEVICES_PATH, "tcp-hostfile");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs --from=PATH"));
  r = run_tool(WEFT_DEVICES_PATH, "tcp-hostfile --from=/nonexistent.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.json cannot be opened"));
  // The listing refuses the command's flags.
  r = run_tool(WEFT_DEVICES_PATH, "--from=hosts.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--from"));
}

}  // namespace
}  // namespace weft::testing
