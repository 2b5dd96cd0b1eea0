// One check of a device file for every command (fabric/topology_check.h):
// a file with a one-way cable, or with a rank joined to none, is refused by
// weft-sim run, study, p2p and launch and by weft-bench (simulated, and
// over verbs from JACCL's environment) before any output, with exit 2 and
// the same line; the algorithm's needs get one piece of advice per file
// whatever --algorithm asks.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

struct BadFile {
  const char* name;
  const char* json;
  const char* finding;  // the line after "<source>: "
};

const BadFile kOneWay = {
    "one_way.json", R"([[null, "a"], [null, null]])",
    "rank 0 names device a toward rank 1 (cell [0][1]) but rank 1 names none "
    "toward rank 0 (cell [1][0] is null); name rank 1's device toward rank 0 "
    "in cell [1][0], or set cell [0][1] to null"};

const BadFile kIsolated = {
    "isolated.json",
    R"([[null, "a", null], ["b", null, null], [null, null, null]])",
    "rank 2 is joined to no rank (row 2 and column 2 are all null); give it "
    "cables to ranks 1 and 0 (its ring neighbours; to every rank for the "
    "mesh), or run with fewer ranks (remove row 2 and column 2)"};

// Exit 2, nothing on stdout, and exactly `line` on stderr.
void expect_refused(const ToolResult& r, const std::string& args,
                    const std::string& line) {
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  EXPECT_EQ(r.out, "") << args;
  EXPECT_EQ(r.err, line + "\n") << args;
}

void expect_sim_refuses(const std::string& args, const std::string& line) {
  expect_refused(run_tool(WEFT_SIM_PATH, args), args, line);
}

// `command`'s first word, --devices=path, and the rest (before launch's
// "--").
std::string with_devices(const std::string& command, const std::string& path) {
  const size_t space = command.find(' ');
  return command.substr(0, space) + " --devices=" + path +
         command.substr(space);
}

// Every weft-sim command that reads --devices, and each algorithm of run.
std::vector<std::string> sim_commands() {
  return {
      "run --bytes=4K",
      "run --bytes=4K --algorithm=mesh",
      "run --bytes=4K --algorithm=ring",
      "run --bytes=4K --algorithm=auto",
      "study --max_bytes=4K",
      "p2p --frames=10",
#ifdef WEFT_SIM_LAUNCH
      "launch --timeout_s=30 -- /bin/true",
#endif
  };
}

TEST(DeviceFileCheck, WeftSimRefusesAOneWayCableAndAnIsolatedRankAlike) {
  for (const BadFile& f : {kOneWay, kIsolated}) {
    const std::string path = write_scratch(f.name, f.json);
    for (const std::string& command : sim_commands()) {
      expect_sim_refuses(with_devices(command, path),
                         "weft-sim: --devices: " + path + ": " + f.finding);
    }
  }
}

TEST(DeviceFileCheck, WeftBenchRefusesThemAlikeSimulatedAndOverVerbs) {
  for (const BadFile& f : {kOneWay, kIsolated}) {
    const std::string path = write_scratch(f.name, f.json);
    for (const char* algorithm : {"mesh", "ring", "auto"}) {
      const std::string args = std::string("--fabric=sim -b 4K -e 4K ") +
                               "--algorithm=" + algorithm +
                               " --devices=" + path;
      expect_refused(run_tool(WEFT_BENCH_PATH, args), args,
                     "weft-bench: --devices: " + path + ": " + f.finding);
    }
    // One rank of a group from JACCL's environment: weft::Config's loader.
    const std::string args = "--fabric=verbs -b 4K -e 4K";
    expect_refused(run_tool(WEFT_BENCH_PATH, args,
                            "JACCL_RANK=0 JACCL_COORDINATOR=127.0.0.1:1 "
                            "WEFT_VERBS_LIBRARY=/nonexistent/libibverbs.so.1 "
                            "JACCL_IBV_DEVICES=" +
                                path + " "),
                   args,
                   "weft-bench: JACCL_IBV_DEVICES: " + path + ": " + f.finding);
  }
}

// Cables neither the mesh nor the ring runs on: one line whatever was
// asked (the mesh once said "use ring or auto", auto "use mesh or a ring
// topology"), before the study's header too.
TEST(DeviceFileCheck, CablesNoAlgorithmRunsOnGetOneAdviceWhateverIsAsked) {
  const std::string path = write_scratch(
      "line.json", R"([[null, "a", null, null], ["b", null, "c", null],
                       [null, "d", null, "e"], [null, null, "f", null]])");
  const std::string line =
      "weft-sim: --devices: " + path +
      ": ranks 3 and 0 are not joined (cells [3][0] and [0][3] are null), "
      "so neither the ring (each rank joined to the next) nor the mesh "
      "(every pair joined) runs on these cables; join ranks 3 and 0 for the "
      "ring, or every pair for the mesh";
  for (const char* command :
       {"run --bytes=4K --algorithm=mesh", "run --bytes=4K --algorithm=ring",
        "run --bytes=4K --algorithm=auto", "study --max_bytes=4K"}) {
    expect_sim_refuses(std::string(command) + " --devices=" + path, line);
  }
  const std::string args = "--fabric=sim -b 4K -e 4K --devices=" + path;
  expect_refused(run_tool(WEFT_BENCH_PATH, args), args,
                 "weft-bench" + line.substr(std::string("weft-sim").size()));
}

// A ring asked for the mesh: the ring runs, so that is the advice; auto
// and ring run.
TEST(DeviceFileCheck, ARingAskedForTheMeshIsToldToUseTheRing) {
  const std::string path = write_scratch(
      "ring4.json", R"([[null, "a", null, "b"], ["c", null, "d", null],
                        [null, "e", null, "f"], ["g", null, "h", null]])");
  expect_sim_refuses(
      "run --bytes=4K --algorithm=mesh --devices=" + path,
      "weft-sim: --devices: " + path +
          ": ranks 0 and 2 are not joined (cells [0][2] and [2][0] are "
          "null), which the mesh needs (every pair joined); the ring runs on "
          "these cables (each rank is joined to the next): use "
          "--algorithm=ring or auto, or join every pair for the mesh (and 1 "
          "more problem)");
  for (const char* algorithm : {"ring", "auto"}) {
    const ToolResult r =
        run_tool(WEFT_SIM_PATH, std::string("run --bytes=4K --algorithm=") +
                                    algorithm + " --devices=" + path);
    EXPECT_EQ(r.code, 0) << algorithm << "\n" << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("correct")) << algorithm;
  }
}

}  // namespace
}  // namespace weft::testing
