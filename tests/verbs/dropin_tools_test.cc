// Debian's unmodified rdma-core tools (package ibverbs-utils: ibv_devices,
// ibv_devinfo, ibv_uc_pingpong) load the drop-in verbs library through
// LD_LIBRARY_PATH (every function they import is there, with the version
// they ask for), and list exactly the simulated devices of the rank they
// run as, with the node GUIDs, port state and GID table the documented
// scheme gives.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kToolDeadlineS = 60;

struct ToolRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

// Runs `tool` with the drop-in directory as LD_LIBRARY_PATH and exactly
// `variables` among the provider's, under a deadline.
ToolRun run(const char* tool, const std::string& args,
            const std::map<std::string, std::string>& variables) {
  // Under AddressSanitizer the tools (built without it) need its runtime
  // preloaded to load the instrumented provider; otherwise nothing is.
  const std::string preload = WEFT_FOREIGN_PRELOAD;
  std::string command = "env";
  for (const char* name : testing::kProviderVariables) {
    command += std::string(" -u ") + name;
  }
  command += preload.empty() ? " -u LD_PRELOAD"
                             : " LD_PRELOAD='" + preload + "'";
  command +=
      std::string(" LD_LIBRARY_PATH='") + WEFT_SIM_VERBS_DROPIN_DIR + "'";
  for (const auto& [name, value] : variables) {
    command += " " + name + "='" + value + "'";
  }
  command +=
      absl::StrFormat(" timeout %d '%s' %s 2>&1", kToolDeadlineS, tool, args);
  ToolRun result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// One simulated device as the documentation describes it.
struct Device {
  std::string name;  // sim_<rank>_<peer>_<cable> in a mesh
  uint64_t guid = 0;
  std::string link_local;  // GID 0, as inet_ntop writes it
  std::string ipv4;        // GID 1's address, 169.254.<rank>.<index + 1>
};

std::vector<std::string> lines_of(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// Runs `command` (no provider variables, no drop-in) and returns what it
// printed; "" if it could not run or failed.
std::string output_of(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

std::string ipv6_text(const std::array<uint8_t, 16>& bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes.data(), text, sizeof(text));
  return text;
}

// Rank `rank`'s devices in a full mesh of `ranks` with `cables` per pair,
// in the order the provider lists them (peer, then cable): index i has
// node GUID 02:00:5e:00:00:<rank>:<i + 1> (16 bits each), link-local GID
// fe80::200:0:<rank>:<i + 1> and IPv4-mapped GID ::ffff:169.254.<rank>.<i+1>.
std::vector<Device> mesh_devices(uint32_t ranks, uint32_t cables,
                                 uint32_t rank) {
  std::vector<Device> devices;
  for (uint32_t peer = 0; peer < ranks; ++peer) {
    for (uint32_t cable = 0; peer != rank && cable < cables; ++cable) {
      const auto index = static_cast<uint32_t>(devices.size());
      Device d;
      d.name = absl::StrFormat("sim_%u_%u_%u", rank, peer, cable);
      d.guid =
          (uint64_t{0x02005e} << 40) | (uint64_t{rank} << 16) | (index + 1);
      std::array<uint8_t, 16> gid{};
      gid[0] = 0xfe;
      gid[1] = 0x80;
      gid[8] = 0x02;
      gid[13] = static_cast<uint8_t>(rank);
      gid[15] = static_cast<uint8_t>(index + 1);
      d.link_local = ipv6_text(gid);
      d.ipv4 = absl::StrFormat("169.254.%u.%u", rank, index + 1);
      devices.push_back(d);
    }
  }
  return devices;
}

// ibv_devices' table: (name, GUID) per line after its two header lines.
std::vector<std::pair<std::string, uint64_t>> parse_devices(
    const std::string& out) {
  std::vector<std::pair<std::string, uint64_t>> rows;
  std::istringstream lines(out);
  std::string line;
  for (int header = 0; header < 2 && std::getline(lines, line); ++header) {
  }
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    std::string guid;
    if (!(fields >> name >> guid)) continue;
    rows.emplace_back(name, std::stoull(guid, nullptr, 16));
  }
  return rows;
}

// ibv_devinfo's report split into one block per device ("hca_id:" on).
std::vector<std::string> devinfo_blocks(const std::string& out) {
  std::vector<std::string> blocks;
  const std::string marker = "hca_id:\t";
  for (size_t at = out.find(marker); at != std::string::npos;) {
    const size_t next = out.find(marker, at + marker.size());
    blocks.push_back(out.substr(at, next - at));
    at = next;
  }
  return blocks;
}

std::string guid_groups(uint64_t guid) {
  return absl::StrFormat("%04x:%04x:%04x:%04x", (guid >> 48) & 0xffff,
                         (guid >> 32) & 0xffff, (guid >> 16) & 0xffff,
                         guid & 0xffff);
}

TEST(DropinToolsTest, EveryFunctionTheToolsImportIsThere) {
  void* ours = dlopen(WEFT_SIM_VERBS_DROPIN_DIR "/libibverbs.so.1",
                      RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(ours, nullptr) << dlerror();
  for (const char* tool : {WEFT_IBV_DEVICES_PATH, WEFT_IBV_DEVINFO_PATH,
                           WEFT_IBV_UC_PINGPONG_PATH}) {
    // Undefined symbols read "name@VERSION (index)"; rdma-core's versions
    // all start with IBVERBS_.
    const std::string symbols = output_of(
        absl::StrFormat("'%s' -W --dyn-syms '%s'", WEFT_READELF, tool));
    ASSERT_FALSE(symbols.empty()) << tool;
    int imports = 0;
    for (const std::string& line : lines_of(symbols)) {
      const size_t at = line.find("@IBVERBS_");
      if (line.find(" UND ") == std::string::npos || at == std::string::npos) {
        continue;
      }
      const size_t name_start = line.rfind(' ', at) + 1;
      const std::string name = line.substr(name_start, at - name_start);
      const std::string version =
          line.substr(at + 1, line.find(' ', at) - at - 1);
      EXPECT_NE(dlvsym(ours, name.c_str(), version.c_str()), nullptr)
          << tool << " imports " << name << "@" << version;
      ++imports;
    }
    EXPECT_GT(imports, 0) << tool;
  }
  dlclose(ours);
}

// ibv_uc_pingpong binds every symbol when it loads (it is linked with
// BIND_NOW), so getting to its usage text means the drop-in satisfied it.
TEST(DropinToolsTest, UcPingpongLoads) {
  const ToolRun r = run(WEFT_IBV_UC_PINGPONG_PATH, "--no-such-flag", {});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Usage:"));
  EXPECT_THAT(r.out, Not(HasSubstr("symbol lookup error")));
}

TEST(DropinToolsTest, IbvDevicesListsExactlyTheRanksDevices) {
  for (const uint32_t cables : {1u, 2u}) {
    for (uint32_t rank = 0; rank < 3; ++rank) {
      const ToolRun r = run(WEFT_IBV_DEVICES_PATH, "",
                            {{"WEFT_SIM_VERBS_RANKS", "3"},
                             {"WEFT_SIM_VERBS_CABLES", std::to_string(cables)},
                             {"WEFT_SIM_VERBS_RANK", std::to_string(rank)}});
      ASSERT_EQ(r.exit_code, 0) << r.out;
      std::vector<std::pair<std::string, uint64_t>> expected;
      for (const Device& d : mesh_devices(3, cables, rank)) {
        expected.emplace_back(d.name, d.guid);
      }
      EXPECT_EQ(parse_devices(r.out), expected)
          << "rank " << rank << ", " << cables << " cable(s):\n"
          << r.out;
      EXPECT_THAT(r.out, Not(HasSubstr("no version information")));
    }
  }
}

TEST(DropinToolsTest, IbvDevinfoShowsActiveRocePortsAndGids) {
  for (uint32_t rank = 0; rank < 3; ++rank) {
    const ToolRun r = run(WEFT_IBV_DEVINFO_PATH, "-v",
                          {{"WEFT_SIM_VERBS_RANKS", "3"},
                           {"WEFT_SIM_VERBS_RANK", std::to_string(rank)}});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::vector<Device> devices = mesh_devices(3, 1, rank);
    const std::vector<std::string> blocks = devinfo_blocks(r.out);
    ASSERT_EQ(blocks.size(), devices.size()) << r.out;
    for (size_t i = 0; i < devices.size(); ++i) {
      const Device& d = devices[i];
      const std::string& block = blocks[i];
      EXPECT_THAT(block, HasSubstr("hca_id:\t" + d.name + "\n"));
      EXPECT_THAT(block,
                  HasSubstr("node_guid:\t\t\t" + guid_groups(d.guid) + "\n"));
      EXPECT_THAT(block, HasSubstr("phys_port_cnt:\t\t\t1\n"));
      EXPECT_THAT(block, HasSubstr("state:\t\t\tPORT_ACTIVE (4)\n"));
      EXPECT_THAT(block, HasSubstr("active_mtu:\t\t1024 (3)\n"));
      EXPECT_THAT(block, HasSubstr("link_layer:\t\tEthernet\n"));
      EXPECT_THAT(block, HasSubstr("gid_tbl_len:\t\t2\n"));
      EXPECT_THAT(block, HasSubstr("phys_state:\t\tLINK_UP (5)\n"));
      EXPECT_THAT(block,
                  HasSubstr("GID[  0]:\t\t" + d.link_local + ", RoCE v2\n"));
      EXPECT_THAT(block,
                  HasSubstr("GID[  1]:\t\t::ffff:" + d.ipv4 + ", RoCE v2\n"));
    }
  }
}

TEST(DropinToolsTest, IbvDevinfoShowsADownPort) {
  const ToolRun r = run(WEFT_IBV_DEVINFO_PATH, "-v -d sim_1_2_0",
                        {{"WEFT_SIM_VERBS_RANKS", "3"},
                         {"WEFT_SIM_VERBS_RANK", "1"},
                         {"WEFT_SIM_VERBS_PORT", "down:sim_1_2_0"}});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> blocks = devinfo_blocks(r.out);
  ASSERT_EQ(blocks.size(), 1u) << r.out;
  EXPECT_THAT(blocks[0], HasSubstr("hca_id:\tsim_1_2_0\n"));
  EXPECT_THAT(blocks[0], HasSubstr("state:\t\t\tPORT_DOWN (1)\n"));
  EXPECT_THAT(blocks[0], HasSubstr("phys_state:\t\tDISABLED (3)\n"));
}

// Whether `shown` (a page's sample output, "..." standing for any number of
// lines) is what the tool printed, line for line.
bool shows(const std::vector<std::string>& shown,
           const std::vector<std::string>& actual) {
  size_t at = 0;
  bool skipping = false;
  for (const std::string& line : shown) {
    if (absl::StripAsciiWhitespace(line) == "...") {
      skipping = true;
      continue;
    }
    while (skipping && at < actual.size() && actual[at] != line) ++at;
    if (at == actual.size() || actual[at] != line) return false;
    ++at;
    skipping = false;
  }
  return skipping || at == actual.size();
}

// The drop-in section of docs/simulated-verbs.md shows commands with their
// output: each runs and prints what the page shows.
TEST(DropinToolsTest, TheDocsShowWhatTheToolsPrint) {
  std::ifstream file(std::string(WEFT_SOURCE_DIR) + "/docs/simulated-verbs.md");
  ASSERT_TRUE(file.good());
  const std::string page((std::istreambuf_iterator<char>(file)),
                         std::istreambuf_iterator<char>());
  const std::string start = "$ export LD_LIBRARY_PATH=";
  const size_t from = page.find(start);
  ASSERT_NE(from, std::string::npos);
  const std::string sample = page.substr(from, page.find("```", from) - from);
  // Each "$ VAR=value ... tool args" with the lines up to the next "$ ".
  const std::map<std::string, std::string> tools = {
      {"ibv_devices", WEFT_IBV_DEVICES_PATH},
      {"ibv_devinfo", WEFT_IBV_DEVINFO_PATH}};
  int commands = 0;
  const std::vector<std::string> lines = lines_of(sample);
  for (size_t i = 1; i < lines.size(); ++i) {
    ASSERT_EQ(lines[i].rfind("$ ", 0), 0u) << lines[i];
    std::vector<std::string> words =
        absl::StrSplit(lines[i].substr(2), ' ', absl::SkipEmpty());
    std::map<std::string, std::string> variables;
    size_t w = 0;
    for (; w < words.size() && words[w].find('=') != std::string::npos; ++w) {
      const size_t eq = words[w].find('=');
      variables[words[w].substr(0, eq)] = words[w].substr(eq + 1);
    }
    ASSERT_LT(w, words.size()) << lines[i];
    ASSERT_EQ(tools.count(words[w]), 1u) << lines[i];
    std::string args;
    for (size_t k = w + 1; k < words.size(); ++k) args += " " + words[k];
    std::vector<std::string> shown;
    for (; i + 1 < lines.size() && lines[i + 1].rfind("$ ", 0) != 0; ++i) {
      shown.push_back(lines[i + 1]);
    }
    const ToolRun r = run(tools.at(words[w]).c_str(), args, variables);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(shows(shown, lines_of(r.out)))
        << "the page shows:\n"
        << absl::StrJoin(shown, "\n") << "\n"
        << words[w] << " printed:\n"
        << r.out;
    ++commands;
  }
  EXPECT_EQ(commands, 2);
}

TEST(DropinToolsTest, BadConfigurationIsReportedNotACrash) {
  const ToolRun r =
      run(WEFT_IBV_DEVICES_PATH, "", {{"WEFT_SIM_VERBS_RANKS", "0"}});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("WEFT_SIM_VERBS_RANKS=0"));
}

}  // namespace
}  // namespace weft::verbs
