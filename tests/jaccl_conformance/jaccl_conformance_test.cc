// JACCL programs, written against JACCL's headers only, run one process per
// rank on weft's simulated fabric (`weft-sim launch`): the conformance
// program (every call, every dtype, the size cases, the refusals), the
// all-sum benchmark, the staggered barrier and the configuration built in
// code, started from the environment and from a Config, on meshes and
// rings of 2 to 10 ranks, with one cable or two. The programs check every
// byte against values they compute themselves; here each rank's exit code
// and its last line are asserted.
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl_launch.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

struct Case {
  World world;
  bool config;         // Config in code (else jaccl::init() from the env)
  bool ring;           // prefer the ring (JACCL_RING=1, or --ring)
  long max_count = 0;  // the conformance program's largest count (0: all)
};

// The conformance program on world `c.world`; every rank must pass.
void run_conformance(const Case& c) {
  std::string args;
  // A ring joins neighbours only: send/recv go between them.
  if (c.ring || c.world.ring_topology) args += " --neighbours_only";
  // Where no cable joins rank r to r + 2, a send there is refused.
  if (c.world.ring_topology && c.world.ranks >= 4) {
    args += " --unjoined_refused";
  }
  if (c.max_count > 0) absl::StrAppend(&args, " --max_count=", c.max_count);
  std::string env;
  std::string program;
  if (c.config) {
    program = per_rank_config(WEFT_JACCL_CONFORMANCE, c.world,
                              args + (c.ring ? " --ring" : ""));
  } else {
    program = absl::StrCat(WEFT_JACCL_CONFORMANCE, args);
    if (c.ring) env = "JACCL_RING=1 ";
  }
  const Launch l = launch(c.world.flags() + " --seed=1", program, env);
  expect_all_exited_zero(l, c.world.ranks);
  for (int r = 0; r < c.world.ranks; ++r) {
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("rank ", r, " of ", c.world.ranks)));
    EXPECT_THAT(l.tool.out,
                ::testing::ContainsRegex(absl::StrCat(
                    "rank ", r, ": conformance OK, [0-9]+ checks")));
  }
  if (c.config) {
    // The layout the program built: every mesh with the same cable count
    // everywhere is also a ring; a ring of 4 or more is no mesh.
    const bool mesh = !c.world.ring_topology || c.world.ranks <= 3;
    EXPECT_THAT(l.tool.out, HasSubstr(absl::StrCat("config rank 0: valid mesh ",
                                                   mesh ? "yes" : "no",
                                                   ", valid ring yes")));
  }
}

TEST(Conformance, TwoRanksOfAMeshFromTheEnvironment) {
  run_conformance({World{2, false, 1}, false, false});
}

TEST(Conformance, ThreeRanksOfAMeshWithTwoCablesFromAConfig) {
  run_conformance({World{3, false, 2}, true, false});
}

TEST(Conformance, FourRanksOfAMeshPreferringTheRingFromTheEnvironment) {
  run_conformance({World{4, false, 1}, false, true, 600});
}

TEST(Conformance, FiveRanksOfARingFromTheEnvironment) {
  run_conformance({World{5, true, 1}, false, true, 600});
}

TEST(Conformance, FourRanksOfARingWithTwoCablesFromAConfig) {
  run_conformance({World{4, true, 2}, true, true, 600});
}

TEST(Conformance, EightRanksOfAMeshFromTheEnvironment) {
  run_conformance({World{8, false, 1}, false, false, 1009});
}

// The all-sum benchmark: one line per size, each OK, on every rank.
void expect_bench_ok(const Launch& l, int ranks, int sizes,
                     const std::string& type) {
  expect_all_exited_zero(l, ranks);
  int rows = 0;
  for (const std::string& line : lines_of(l.tool.out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() != 7 || f[2] != type) continue;
    ++rows;
    EXPECT_EQ(f[6], "OK") << line;
  }
  EXPECT_EQ(rows, sizes) << l.tool.out;
  for (int r = 0; r < ranks; ++r) {
    EXPECT_THAT(l.tool.out, HasSubstr(absl::StrCat("rank ", r, ": ", sizes,
                                                   " sizes, all OK")));
  }
}

TEST(AllSumBench, FourRanksFloat32FromTheEnvironment) {
  // 1 KiB, 4 KiB, ... 1 MiB: six sizes.
  const Launch l = launch(
      "--ranks=4 --seed=1",
      absl::StrCat(WEFT_JACCL_ALLSUM_BENCH, " -b 1K -e 1M -f 4 -d float32"));
  expect_bench_ok(l, 4, 6, "float32");
}

TEST(AllSumBench, HalfPrecisionOnARingOfThree) {
  for (const char* type : {"float16", "bfloat16"}) {
    const Launch l = launch(
        "--ranks=3 --topology=ring --seed=1",
        absl::StrCat(WEFT_JACCL_ALLSUM_BENCH, " -b 2 -e 64K -f 16 -d ", type),
        "JACCL_RING=1 ");
    // 2, 32, 512, 8 KiB bytes.
    expect_bench_ok(l, 3, 4, type);
  }
}

// Files the barrier program writes, in a directory of their own.
std::string fresh_dir() {
  std::string dir = ::testing::TempDir() + "/weft_barrier_XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << dir;
  return dir;
}

void expect_barriers_ok(const Launch& l, int ranks) {
  expect_all_exited_zero(l, ranks);
  for (int r = 0; r < ranks; ++r) {
    EXPECT_THAT(l.tool.out, HasSubstr(absl::StrCat(
                                "rank ", r, ": 3 barriers OK, all_sum OK")));
  }
}

TEST(StaggeredBarrier, FiveRanksOfAMeshFromTheEnvironment) {
  const std::string dir = fresh_dir();
  const Launch l = launch("--ranks=5 --seed=1",
                          absl::StrCat(WEFT_JACCL_BARRIER, " --dir=", dir,
                                       " --stagger_ms=20 --rounds=3"));
  expect_barriers_ok(l, 5);
  std::filesystem::remove_all(dir);
}

TEST(StaggeredBarrier, TenRanksOfAMeshPastJacclsLimitOfEight) {
  const std::string dir = fresh_dir();
  const Launch l = launch(
      "--ranks=10 --seed=1",
      absl::StrCat(WEFT_JACCL_BARRIER, " --dir=", dir, " --stagger_ms=2"));
  expect_barriers_ok(l, 10);
  std::filesystem::remove_all(dir);
}

TEST(StaggeredBarrier, FourRanksOfARingFromAConfig) {
  const std::string dir = fresh_dir();
  const World w{4, true, 1};
  const Launch l =
      launch(w.flags() + " --seed=1",
             per_rank_config(WEFT_JACCL_BARRIER, w,
                             absl::StrCat("--dir=", dir, " --stagger_ms=20")));
  expect_barriers_ok(l, 4);
  std::filesystem::remove_all(dir);
}

TEST(ConfigInCode, AMeshOfFourWithRanksAsArguments) {
  const World w{4, false, 1};
  const Launch l = launch(w.flags() + " --seed=1",
                          per_rank_config(WEFT_JACCL_CONFIG, w, ""));
  expect_all_exited_zero(l, 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("config rank ", r,
                                       ": valid mesh yes, valid ring yes")));
    EXPECT_THAT(l.tool.out, HasSubstr(absl::StrCat("Rank ", r, " of 4")));
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("rank ", r, ": config in code OK")));
  }
}

TEST(ConfigInCode, ASideChannelOfTheProgramsOwnInPlaceOfTheCoordinator) {
  // No coordinator (the last --coordinator wins, and it is empty): the
  // group forms only if the ranks exchange their details through the
  // program's all-gather (files in a directory).
  const World w{3, false, 1};
  const std::string dir = fresh_dir();
  const Launch l =
      launch(w.flags() + " --seed=1",
             per_rank_config(WEFT_JACCL_CONFIG, w,
                             "--side_channel_dir=" + dir + " --coordinator="));
  expect_all_exited_zero(l, 3);
  EXPECT_TRUE(std::filesystem::exists(dir + "/ag0_r2"));
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("side channel for rank ", r, " of 3")));
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("rank ", r, ": config in code OK")));
  }
  std::filesystem::remove_all(dir);
}

TEST(ConfigInCode, ARingOfSixWithTheRankAsTextFromTheEnvironment) {
  // set_rank(const char*) with JACCL_RANK's text; two cables each way.
  const World w{6, true, 2};
  const std::string layout = write_layout(w);
  const Launch l =
      launch(w.flags() + " --seed=1",
             absl::StrCat(WEFT_JACCL_CONFIG, " --rank_env=JACCL_RANK --ring",
                          " --coordinator=127.0.0.1:", free_port(),
                          " --layout=", layout));
  expect_all_exited_zero(l, 6);
  for (int r = 0; r < 6; ++r) {
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("config rank ", r,
                                       ": valid mesh no, valid ring yes")));
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("rank ", r, ": config in code OK")));
  }
}

// The launch contract over TCP: under `weft-sim launch --fabric=tcp` a
// JACCL program, unchanged, gets its group over weft's TCP fabric from
// the hostfile launch writes (WEFT_FABRIC=tcp), where JACCL's variables
// alone would give it none.
Launch launch_over_tcp(int ranks, const std::string& program) {
  return parse_launch(run_tool(
      WEFT_SIM_PATH, absl::StrCat("launch --fabric=tcp --timeout_s=120 "
                                  "--ranks=",
                                  ranks, " -- ", program)));
}

void expect_exits_zero(const Launch& l, int ranks) {
  EXPECT_EQ(l.tool.code, 0) << l.tool.out << l.tool.err;
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 0")
        << "rank " << r << "\n"
        << l.tool.out << l.tool.err;
  }
}

TEST(OverTcp, JacclAllSumUnderLaunch) {
  const Launch l = launch_over_tcp(3, WEFT_JACCL_ALL_SUM);
  expect_exits_zero(l, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(l.tool.out, HasSubstr(absl::StrCat("jaccl_all_sum: rank ", r,
                                                   " of 3: sum 6, correct")));
  }
}

TEST(OverTcp, ConformanceUnderLaunch) {
  const Launch l = launch_over_tcp(
      3, absl::StrCat(WEFT_JACCL_CONFORMANCE, " --max_count=1000"));
  expect_exits_zero(l, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(l.tool.out,
                ::testing::ContainsRegex(absl::StrCat(
                    "rank ", r, ": conformance OK, [0-9]+ checks")));
  }
  EXPECT_THAT(l.tool.out, ::testing::Not(HasSubstr("FAIL")));
}

}  // namespace
}  // namespace weft::testing
