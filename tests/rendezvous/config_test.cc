#include "rendezvous/config.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rendezvous/config_env_fixture.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kMesh4[] = R"([[null, "rdma_en2", "rdma_en3", "rdma_en4"],
                              ["rdma_en2", null, "rdma_en3", "rdma_en4"],
                              ["rdma_en2", "rdma_en3", null, "rdma_en4"],
                              ["rdma_en2", "rdma_en3", "rdma_en4", null]])";
// Ranks 0-1-2-3-0 joined, 0-2 and 1-3 not.
constexpr char kRing4[] = R"([[null, "en1", null, "en3"],
                              ["en1", null, "en2", null],
                              [null, "en2", null, "en3"],
                              ["en3", null, "en2", null]])";
// Two cables between the two ranks.
constexpr char kTwoCables[] = R"([[null, ["rdma_en2", "rdma_en5"]],
                                  [["rdma_en3", "rdma_en6"], null]])";

std::string message(const absl::Status& s) { return std::string(s.message()); }

class ConfigFromEnvironment : public testing::ConfigEnvFixture {
 protected:
  // A complete, valid 4-rank environment using JACCL's names.
  void set_jaccl_mesh(const std::string& rank) {
    env_["JACCL_RANK"] = rank;
    env_["JACCL_IBV_DEVICES"] = write_json("mesh4.json", kMesh4);
    env_["JACCL_COORDINATOR"] = "192.168.1.10:5000";
  }
};

TEST_F(ConfigFromEnvironment, ReadsJacclVariables) {
  set_jaccl_mesh("2");
  env_["JACCL_RING"] = "0";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 2u);
  EXPECT_EQ(c->size, 4u);
  EXPECT_EQ(c->devices.ranks(), 4u);
  EXPECT_THAT(c->devices.devices(2, 3), ElementsAre("rdma_en4"));
  EXPECT_THAT(c->devices.devices(1, 0), ElementsAre("rdma_en2"));
  EXPECT_EQ(c->coordinator, "192.168.1.10:5000");
  EXPECT_FALSE(c->ring);
  EXPECT_EQ(c->connect_timeout_ns, Config::kDefaultConnectTimeoutNs);
  EXPECT_EQ(c->exchange_timeout_ns, Config::kDefaultExchangeTimeoutNs);
}

TEST_F(ConfigFromEnvironment, SecretFromWeftSecretEmptyIsNone) {
  set_jaccl_mesh("2");
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->secret.empty());
  env_["WEFT_SECRET"] = "";
  c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->secret.empty());
  // Short secrets work (the docs recommend 32 random bytes); kept as given.
  env_["WEFT_SECRET"] = " short ";
  c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->secret, " short ");
}

TEST_F(ConfigFromEnvironment, ReadsMlxAliases) {
  env_["MLX_RANK"] = "3";
  env_["MLX_IBV_DEVICES"] = write_json("ring4.json", kRing4);
  env_["MLX_JACCL_COORDINATOR"] = "localhost:6000";
  env_["MLX_JACCL_RING"] = "TRUE";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 3u);
  EXPECT_EQ(c->size, 4u);
  EXPECT_THAT(c->devices.devices(3, 0), ElementsAre("en3"));
  EXPECT_FALSE(c->devices.connected(0, 2));
  EXPECT_EQ(c->coordinator, "localhost:6000");
  EXPECT_TRUE(c->ring);
}

// The side channel speaks IPv6 too: a coordinator in brackets is read from
// any of the three variables.
TEST_F(ConfigFromEnvironment, ReadsAnIpv6Coordinator) {
  for (const char* name :
       {"WEFT_COORDINATOR", "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR"}) {
    env_.clear();
    set_jaccl_mesh("1");
    env_.erase("JACCL_COORDINATOR");
    env_[name] = "[::1]:5000";
    absl::StatusOr<Config> c = read();
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->coordinator, "[::1]:5000");
    absl::StatusOr<HostPort> hp = parse_host_port(c->coordinator);
    ASSERT_TRUE(hp.ok());
    EXPECT_EQ(hp->host, "::1");
    EXPECT_EQ(hp->port, 5000);
  }
}

// IPv6 written the ways that cannot work is refused, naming the variable
// and saying what to write (tests/net has every refusal's wording).
TEST_F(ConfigFromEnvironment, BadIpv6CoordinatorsSayWhatToWrite) {
  for (const std::string value : {"::1:5000", "[::1]", "[zz]:1"}) {
    env_.clear();
    set_jaccl_mesh("1");
    env_["JACCL_COORDINATOR"] = value;
    absl::StatusOr<Config> got = read();
    ASSERT_FALSE(got.ok()) << value;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        message(got.status()),
        AllOf(HasSubstr("JACCL_COORDINATOR: '" + value + "' is not host:port"),
              HasSubstr("or \"[ipv6]:port\" (e.g. \"[::1]:5000\")")))
        << value;
  }
  env_["JACCL_COORDINATOR"] = "::1:5000";
  EXPECT_THAT(
      message(read().status()),
      HasSubstr("an IPv6 address needs brackets: write \"[::1]:5000\""));
}

TEST_F(ConfigFromEnvironment, DeviceListsForSeveralCables) {
  env_["JACCL_RANK"] = "1";
  env_["JACCL_IBV_DEVICES"] = write_json("two_cables.json", kTwoCables);
  env_["JACCL_COORDINATOR"] = "10.0.0.1:5000";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 2u);
  EXPECT_THAT(c->devices.devices(0, 1), ElementsAre("rdma_en2", "rdma_en5"));
  EXPECT_THAT(c->devices.devices(1, 0), ElementsAre("rdma_en3", "rdma_en6"));
}

TEST_F(ConfigFromEnvironment, LauncherRanks) {
  set_jaccl_mesh("0");
  env_.erase("JACCL_RANK");
  env_["SLURM_PROCID"] = "1";
  ASSERT_TRUE(read().ok());
  EXPECT_EQ(read()->rank, 1u);
  // mpirun inside a Slurm allocation: every process inherits SLURM_PROCID,
  // only OMPI_COMM_WORLD_RANK tells them apart.
  env_["OMPI_COMM_WORLD_RANK"] = "3";
  ASSERT_TRUE(read().ok());
  EXPECT_EQ(read()->rank, 3u);
}

TEST_F(ConfigFromEnvironment, JacclAndMlxRanksBeatLaunchers) {
  set_jaccl_mesh("0");
  env_.erase("JACCL_RANK");
  env_["OMPI_COMM_WORLD_RANK"] = "3";
  env_["SLURM_PROCID"] = "garbage is ignored when not used";
  env_["MLX_RANK"] = "2";
  ASSERT_TRUE(read().ok()) << read().status();
  EXPECT_EQ(read()->rank, 2u);
  env_["JACCL_RANK"] = "2";  // agrees with MLX_RANK
  ASSERT_TRUE(read().ok()) << read().status();
  EXPECT_EQ(read()->rank, 2u);
}

TEST_F(ConfigFromEnvironment, AgreeingAliasesSpelledDifferently) {
  set_jaccl_mesh("1");
  env_["MLX_RANK"] = "01";
  env_["JACCL_RING"] = "false";
  env_["MLX_JACCL_RING"] = "0";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 1u);
  EXPECT_FALSE(c->ring);
}

struct Conflict {
  const char* first;
  const char* first_value;
  const char* second;
  const char* second_value;
};

TEST_F(ConfigFromEnvironment, ConflictingAliasesNameBoth) {
  const std::string other_json = write_json("other.json", kMesh4);
  const Conflict conflicts[] = {
      {"JACCL_RANK", "1", "MLX_RANK", "2"},
      {"JACCL_IBV_DEVICES", nullptr, "MLX_IBV_DEVICES", other_json.c_str()},
      {"JACCL_COORDINATOR", "192.168.1.10:5000", "MLX_JACCL_COORDINATOR",
       "192.168.1.11:5000"},
      {"JACCL_RING", "1", "MLX_JACCL_RING", "false"},
  };
  for (const Conflict& c : conflicts) {
    env_.clear();
    set_jaccl_mesh("1");
    if (c.first_value != nullptr) env_[c.first] = c.first_value;
    env_[c.second] = c.second_value;
    absl::StatusOr<Config> got = read();
    ASSERT_FALSE(got.ok()) << c.first;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string first =
        absl::StrFormat("%s='%s'", c.first, env_[c.first]);
    const std::string second =
        absl::StrFormat("%s='%s'", c.second, c.second_value);
    EXPECT_THAT(
        message(got.status()),
        AllOf(HasSubstr(first), HasSubstr(second), HasSubstr("disagree")));
  }
}

struct Garbage {
  const char* name;
  const char* value;
};

TEST_F(ConfigFromEnvironment, GarbageValuesNameVariableAndValue) {
  const Garbage garbage[] = {
      {"JACCL_RANK", "abc"},
      {"JACCL_RANK", "-1"},
      {"JACCL_RANK", " 1"},
      {"JACCL_RANK", ""},
      {"JACCL_RANK", "99999999999"},
      {"JACCL_RANK", "4096"},
      {"MLX_RANK", "1.5"},
      {"JACCL_RING", "yes"},
      {"MLX_JACCL_RING", "2"},
      {"JACCL_COORDINATOR", "nohost"},
      {"JACCL_COORDINATOR", ":5000"},
      {"JACCL_COORDINATOR", "host:"},
      {"JACCL_COORDINATOR", "host:99999"},
      {"JACCL_COORDINATOR", "host:port"},
      {"JACCL_COORDINATOR", "host:0"},
      {"JACCL_COORDINATOR", "[::1]:0"},
      {"JACCL_COORDINATOR", "::1:5000"},
  };
  for (const Garbage& g : garbage) {
    env_.clear();
    set_jaccl_mesh("1");
    env_[g.name] = g.value;
    absl::StatusOr<Config> got = read();
    ASSERT_FALSE(got.ok()) << g.name << "=" << g.value;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        message(got.status()),
        AllOf(HasSubstr(g.name), HasSubstr(std::string("'") + g.value + "'")))
        << g.name << "=" << g.value;
  }
}

TEST_F(ConfigFromEnvironment, GarbageInLauncherVariableWhenUsed) {
  set_jaccl_mesh("1");
  env_.erase("JACCL_RANK");
  env_["OMPI_COMM_WORLD_RANK"] = "x";
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(message(got.status()), HasSubstr("OMPI_COMM_WORLD_RANK='x'"));
}

TEST_F(ConfigFromEnvironment, MissingValuesSayWhatToSet) {
  set_jaccl_mesh("1");
  env_.erase("JACCL_RANK");
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(got.status()), AllOf(HasSubstr("set JACCL_RANK"),
                                           HasSubstr("OMPI_COMM_WORLD_RANK"),
                                           HasSubstr("SLURM_PROCID")));

  set_jaccl_mesh("1");
  env_.erase("JACCL_IBV_DEVICES");
  got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(got.status()), HasSubstr("set JACCL_IBV_DEVICES"));

  set_jaccl_mesh("1");
  env_.erase("JACCL_COORDINATOR");
  got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(got.status()), HasSubstr("set JACCL_COORDINATOR"));
}

TEST_F(ConfigFromEnvironment, SingleRankNeedsNoCoordinator) {
  env_["JACCL_RANK"] = "0";
  env_["JACCL_IBV_DEVICES"] = write_json("one.json", "[[null]]");
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 1u);
  EXPECT_TRUE(c->coordinator.empty());
}

TEST_F(ConfigFromEnvironment, MissingDeviceFile) {
  set_jaccl_mesh("1");
  const std::string path = ::testing::TempDir() + "/weft_config_absent.json";
  env_["JACCL_IBV_DEVICES"] = path;
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(got.status()),
              AllOf(HasSubstr("JACCL_IBV_DEVICES"), HasSubstr(path)));
}

TEST_F(ConfigFromEnvironment, GarbledDeviceFile) {
  set_jaccl_mesh("1");
  env_["JACCL_IBV_DEVICES"] = write_json("garbled.json", "[[null, 3");
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(got.status()), AllOf(HasSubstr("JACCL_IBV_DEVICES"),
                                           HasSubstr("not valid JSON")));
}

TEST_F(ConfigFromEnvironment, RankBeyondDeviceJson) {
  set_jaccl_mesh("4");
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(got.status()),
              AllOf(HasSubstr("JACCL_RANK='4'"), HasSubstr("lists 4 ranks")));
}

TEST_F(ConfigFromEnvironment, RingCablingNeedsRingFlag) {
  set_jaccl_mesh("1");
  env_["JACCL_IBV_DEVICES"] = write_json("ring4b.json", kRing4);
  absl::StatusOr<Config> got = read();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(message(got.status()), HasSubstr("JACCL_RING=1"));
  env_["JACCL_RING"] = "1";
  got = read();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->ring);
}

TEST_F(ConfigFromEnvironment, DeviceJsonFromAnyLoader) {
  env_["JACCL_RANK"] = "1";
  env_["JACCL_IBV_DEVICES"] = "/nowhere/devices.json";
  env_["JACCL_COORDINATOR"] = "10.0.0.1:5000";
  std::string asked_for;
  absl::StatusOr<Config> c = Config::from_environment(
      [this](const char* name) -> const char* {
        auto it = env_.find(name);
        return it == env_.end() ? nullptr : it->second.c_str();
      },
      [&asked_for](const std::string& path) {
        asked_for = path;
        return Topology::parse_json(kTwoCables);
      });
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(asked_for, "/nowhere/devices.json");
  EXPECT_EQ(c->size, 2u);
  EXPECT_THAT(c->devices.devices(0, 1), ElementsAre("rdma_en2", "rdma_en5"));
}

// The loader's file passes the one check every reader of a device file
// makes (fabric/topology_check.h), named with the variable and the path.
TEST_F(ConfigFromEnvironment, AOneWayCableIsRefusedNamingTheFileAndCells) {
  env_["JACCL_RANK"] = "0";
  env_["JACCL_IBV_DEVICES"] = "/nowhere/devices.json";
  env_["JACCL_COORDINATOR"] = "10.0.0.1:5000";
  absl::StatusOr<Config> c = Config::from_environment(
      [this](const char* name) -> const char* {
        auto it = env_.find(name);
        return it == env_.end() ? nullptr : it->second.c_str();
      },
      [](const std::string&) {
        return Topology::parse_json(R"([[null, "a"], [null, null]])");
      });
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(c.status()),
            "JACCL_IBV_DEVICES: /nowhere/devices.json: rank 0 names device a "
            "toward rank 1 (cell [0][1]) but rank 1 names none toward rank 0 "
            "(cell [1][0] is null); name rank 1's device toward rank 0 in "
            "cell [1][0], or set cell [0][1] to null");
}

Config valid_config() {
  Config c;
  c.rank = 1;
  c.size = 3;
  c.devices = *Topology::mesh(3);
  c.coordinator = "127.0.0.1:5000";
  return c;
}

TEST(ConfigValidate, DefaultIsAGroupOfOne) {
  Config c;
  EXPECT_TRUE(c.validate().ok()) << c.validate();
  EXPECT_EQ(c.size, 1u);
  EXPECT_EQ(c.devices.ranks(), 1u);
}

TEST(ConfigValidate, AcceptsAValidConfig) {
  EXPECT_TRUE(valid_config().validate().ok());
}

TEST(ConfigValidate, RejectsInconsistentFields) {
  struct Case {
    const char* says;
    void (*spoil)(Config&);
  };
  const Case cases[] = {
      {"size 0", [](Config& c) { c.size = 0; }},
      {"rank 3 is not below", [](Config& c) { c.rank = 3; }},
      {"lists 3 ranks but the group's size is 4",
       [](Config& c) { c.size = 4; }},
      {"coordinator", [](Config& c) { c.coordinator = "no-port"; }},
      {"coordinator", [](Config& c) { c.coordinator.clear(); }},
      {"connect timeout", [](Config& c) { c.connect_timeout_ns = 0; }},
      {"exchange timeout",
       [](Config& c) { c.exchange_timeout_ns = Config::kMaxTimeoutNs + 1; }},
      {"JACCL_RING=1",
       [](Config& c) {
         c.devices = *Topology::ring(4);
         c.size = 4;
       }},
      {"rank 2 is joined to no rank",
       [](Config& c) {
         c.devices = *Topology::parse_json(
             R"([[null, "a", null], ["a", null, null], [null, null, null]])");
         c.ring = true;
       }},
  };
  for (const Case& k : cases) {
    Config c = valid_config();
    k.spoil(c);
    absl::Status s = c.validate();
    ASSERT_FALSE(s.ok()) << k.says;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(message(s), HasSubstr(k.says));
  }
}

TEST(HostPort, SplitsHostAndPort) {
  absl::StatusOr<HostPort> hp = parse_host_port("192.168.1.10:5000");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "192.168.1.10");
  EXPECT_EQ(hp->port, 5000);
  hp = parse_host_port("localhost:0");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "localhost");
  EXPECT_EQ(hp->port, 0);
  hp = parse_host_port("mac-1.local:65535");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->port, 65535);
  hp = parse_host_port("[fe80::1]:7");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "fe80::1");
  EXPECT_EQ(hp->port, 7);
  for (const char* bad : {"", ":", "host", ":1", "host:", "host:65536",
                          "host:-1", "host:1x", "host:1234567890", "::1:5000",
                          "[::1]", "[zz]:1", "[::1:5000", "[::1]x5"}) {
    EXPECT_FALSE(parse_host_port(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// The device variable `auto`: no file, the size from WEFT_SIZE or a
// launcher, the cabling left to discovery.
class ConfigAutoDevices : public testing::ConfigEnvFixture {
 protected:
  void set_auto(const std::string& rank) {
    env_["JACCL_RANK"] = rank;
    env_["JACCL_IBV_DEVICES"] = "auto";
    env_["JACCL_COORDINATOR"] = "192.168.1.10:5000";
  }
};

TEST_F(ConfigAutoDevices, TakesTheSizeFromWeftSizeAndLeavesTheCablingOpen) {
  set_auto("1");
  env_["WEFT_SIZE"] = "3";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->discover_devices);
  EXPECT_EQ(c->size, 3u);
  EXPECT_EQ(c->rank, 1u);
  EXPECT_EQ(c->devices.ranks(), 3u);
  EXPECT_FALSE(c->devices.connected(0, 1));
}

TEST_F(ConfigAutoDevices, TakesTheSizeFromALauncher) {
  set_auto("0");
  env_["OMPI_COMM_WORLD_SIZE"] = "2";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 2u);
}

TEST_F(ConfigAutoDevices, WithoutASizeSaysWhatToSet) {
  set_auto("0");
  absl::StatusOr<Config> c = read();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(c.status().message()),
      AllOf(HasSubstr("JACCL_IBV_DEVICES=auto"), HasSubstr("set WEFT_SIZE")));
  env_["WEFT_SIZE"] = "0";
  c = read();
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("WEFT_SIZE='0'"));
}

TEST_F(ConfigAutoDevices, ARankPastTheSizeIsRefused) {
  set_auto("4");
  env_["WEFT_SIZE"] = "4";
  absl::StatusOr<Config> c = read();
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("JACCL_RANK='4' but the group size is 4"));
}

TEST_F(ConfigAutoDevices, TcpWinsWhenTheLaunchNamesIt) {
  set_auto("0");
  env_["WEFT_FABRIC"] = "tcp";
  env_["MLX_HOSTFILE"] =
      write_json("hosts.json", R"([["127.0.0.1:5000"], ["127.0.0.1:5001"]])");
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->discover_devices);
  EXPECT_EQ(c->tcp_hosts.size(), 2u);
}

TEST_F(ConfigAutoDevices, AFileNamesItsVariableAsItsSource) {
  env_["JACCL_RANK"] = "0";
  env_["JACCL_IBV_DEVICES"] =
      write_json("two.json", R"([[null, "a"], ["b", null]])");
  env_["JACCL_COORDINATOR"] = "192.168.1.10:5000";
  absl::StatusOr<Config> c = read();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->discover_devices);
  EXPECT_THAT(c->devices_source, HasSubstr("JACCL_IBV_DEVICES: "));
  EXPECT_THAT(c->devices_source, HasSubstr("two.json"));
}

}  // namespace
}  // namespace weft
