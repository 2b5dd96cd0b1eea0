// Config::from_environment with MLX's ring hostfile: WEFT_HOSTFILE and
// MLX_HOSTFILE, WEFT_RANK's precedence, WEFT_COORDINATOR and the default
// coordinator, a hostfile beside a device JSON (and WEFT_FABRIC choosing),
// and validate() over tcp_hosts.
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/config.h"
#include "rendezvous/tcp_hosts.h"
#include "tests/rendezvous/config_env_fixture.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kThree[] = R"([["127.0.0.1:41000", "127.0.0.1:41001"],
                              ["127.0.0.1:41002", "127.0.0.1:41003"],
                              ["127.0.0.1:41004", "127.0.0.1:41005"]])";

std::string message(const absl::Status& s) { return std::string(s.message()); }

class ConfigTcp : public testing::ConfigEnvFixture {
 protected:
  std::string refusal() {
    absl::StatusOr<Config> c = read();
    EXPECT_FALSE(c.ok());
    if (c.ok()) return "";
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    return message(c.status());
  }
};

TEST_F(ConfigTcp, MlxHostfileAndRankMakeATcpGroup) {
  env_["MLX_HOSTFILE"] = write_json("hosts.json", kThree);
  env_["MLX_RANK"] = "1";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 1u);
  EXPECT_EQ(c->size, 3u);
  EXPECT_THAT(c->tcp_hosts[1],
              ElementsAre("127.0.0.1:41002", "127.0.0.1:41003"));
  // The full mesh over the addresses: row i names rank i's own cables.
  EXPECT_THAT(c->devices.devices(2, 0),
              ElementsAre("127.0.0.1:41004", "127.0.0.1:41005"));
  EXPECT_TRUE(c->devices.is_full_mesh());
  // No coordinator set: rank 0's IP, one above the highest port on it.
  EXPECT_EQ(c->coordinator, "127.0.0.1:41006");
  EXPECT_TRUE(c->validate().ok());
}

TEST_F(ConfigTcp, WeftVariablesComeFirst) {
  env_["WEFT_HOSTFILE"] = write_json("hosts.json", kThree);
  env_["WEFT_RANK"] = "2";
  env_["WEFT_COORDINATOR"] = "127.0.0.1:7000";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 2u);
  EXPECT_EQ(c->coordinator, "127.0.0.1:7000");
  // WEFT_RANK before the launchers' variables, which are not compared.
  env_["OMPI_COMM_WORLD_RANK"] = "0";
  c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 2u);
}

TEST_F(ConfigTcp, AliasesThatDisagreeAreNamedTogether) {
  const std::string path = write_json("hosts.json", kThree);
  env_["WEFT_HOSTFILE"] = path;
  env_["MLX_HOSTFILE"] = path + ".other";
  env_["WEFT_RANK"] = "0";
  EXPECT_THAT(refusal(), AllOf(HasSubstr("WEFT_HOSTFILE='" + path + "'"),
                               HasSubstr("MLX_HOSTFILE="),
                               HasSubstr("WEFT_HOSTFILE takes precedence")));
  env_["MLX_HOSTFILE"] = path;
  env_["MLX_RANK"] = "1";
  EXPECT_THAT(refusal(),
              AllOf(HasSubstr("WEFT_RANK='0'"), HasSubstr("MLX_RANK='1'")));
  env_.erase("MLX_RANK");
  env_["JACCL_COORDINATOR"] = "127.0.0.1:7000";
  env_["WEFT_COORDINATOR"] = "127.0.0.1:7001";
  EXPECT_THAT(refusal(), AllOf(HasSubstr("WEFT_COORDINATOR='127.0.0.1:7001'"),
                               HasSubstr("JACCL_COORDINATOR")));
}

TEST_F(ConfigTcp, HostfileErrorsNameTheVariableTheFileAndTheEntry) {
  const std::string path =
      write_json("bad.json", R"([["127.0.0.1:41000"], ["127.0.0.1:0"]])");
  env_["MLX_HOSTFILE"] = path;
  env_["MLX_RANK"] = "0";
  EXPECT_THAT(refusal(),
              AllOf(HasSubstr("MLX_HOSTFILE: " + path + ": rank 1's entry 0"),
                    HasSubstr("port 0")));
  env_["MLX_HOSTFILE"] = path + ".missing";
  absl::StatusOr<Config> c = read();
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(c.status()), HasSubstr(path + ".missing"));
}

TEST_F(ConfigTcp, RankOutsideTheHostfileNamesIt) {
  env_["MLX_HOSTFILE"] = write_json("hosts.json", kThree);
  env_["MLX_RANK"] = "3";
  EXPECT_THAT(refusal(), AllOf(HasSubstr("MLX_RANK='3'"),
                               HasSubstr("the hostfile lists 3 ranks")));
}

TEST_F(ConfigTcp, HostfileAndDeviceJsonTogetherNeedAChoice) {
  env_["MLX_HOSTFILE"] = write_json("hosts.json", kThree);
  env_["JACCL_IBV_DEVICES"] =
      write_json("devices.json", "[[null, \"en2\"], [\"en2\", null]]");
  env_["JACCL_COORDINATOR"] = "127.0.0.1:7000";
  env_["MLX_RANK"] = "0";
  EXPECT_THAT(refusal(),
              AllOf(HasSubstr("MLX_HOSTFILE="), HasSubstr("JACCL_IBV_DEVICES="),
                    HasSubstr("WEFT_FABRIC=tcp")));
  env_["WEFT_FABRIC"] = "tcp";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 3u);
  EXPECT_FALSE(c->tcp_hosts.empty());
  env_["WEFT_FABRIC"] = "verbs";
  c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 2u);
  EXPECT_TRUE(c->tcp_hosts.empty());
  env_["WEFT_FABRIC"] = "rdma";
  EXPECT_THAT(refusal(), HasSubstr("WEFT_FABRIC='rdma' is not a fabric"));
  env_.erase("MLX_HOSTFILE");
  env_["WEFT_FABRIC"] = "tcp";
  EXPECT_THAT(refusal(), HasSubstr("WEFT_FABRIC=tcp but WEFT_HOSTFILE"));
}

TEST_F(ConfigTcp, NeitherFileSetNamesBoth) {
  env_["MLX_RANK"] = "0";
  EXPECT_THAT(refusal(),
              AllOf(HasSubstr("JACCL_IBV_DEVICES"), HasSubstr("MLX_HOSTFILE")));
}

// The side channel speaks IPv6 as the fabric does, so an IPv6 hostfile
// implies an IPv6 coordinator; an IPv4 one may still be set.
TEST_F(ConfigTcp, Ipv6HostfileImpliesAnIpv6Coordinator) {
  env_["MLX_HOSTFILE"] =
      write_json("v6.json", R"([["[::1]:41000"], ["[::1]:41001"]])");
  env_["MLX_RANK"] = "0";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->coordinator, "[::1]:41002");
  EXPECT_THAT(c->tcp_hosts, ElementsAre(ElementsAre("[::1]:41000"),
                                        ElementsAre("[::1]:41001")));
  env_["WEFT_COORDINATOR"] = "127.0.0.1:41002";
  c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->coordinator, "127.0.0.1:41002");
}

TEST_F(ConfigTcp, CoordinatorOnAHostfileAddressIsRefused) {
  env_["MLX_HOSTFILE"] = write_json("hosts.json", kThree);
  env_["MLX_RANK"] = "0";
  env_["WEFT_COORDINATOR"] = "127.0.0.1:41003";
  EXPECT_THAT(refusal(), AllOf(HasSubstr("127.0.0.1:41003 is also rank 1's"),
                               HasSubstr("port of its own")));
}

TEST(ConfigTcpValidate, CoversTcpHosts) {
  Config c;
  c.size = 2;
  c.coordinator = "127.0.0.1:7000";
  c.tcp_hosts = {{"127.0.0.1:5000"}, {"127.0.0.1:5001"}};
  c.devices = tcp_mesh_topology(c.tcp_hosts);
  EXPECT_TRUE(c.validate().ok()) << c.validate();
  Config wrong_size = c;
  wrong_size.tcp_hosts.push_back({"127.0.0.1:5002"});
  EXPECT_THAT(message(wrong_size.validate()),
              HasSubstr("tcp_hosts lists 3 ranks but the group's size is 2"));
  Config bad_entry = c;
  bad_entry.tcp_hosts[1][0] = "127.0.0.1:0";
  EXPECT_THAT(message(bad_entry.validate()),
              HasSubstr("tcp_hosts: rank 1's entry 0"));
  Config other_devices = c;
  other_devices.devices = *Topology::mesh(2);
  EXPECT_THAT(message(other_devices.validate()),
              HasSubstr("tcp_mesh_topology(tcp_hosts)"));
}

}  // namespace
}  // namespace weft
