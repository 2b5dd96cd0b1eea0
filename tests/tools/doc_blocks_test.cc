// The doc test's own rules: markers, blocks, commands, and the comparison
// of a block with what its commands printed (masks, "...", excerpts).
#include "doc_blocks.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::testing::docs {
namespace {

using ::testing::HasSubstr;

using Lines = std::vector<std::string>;

const Lines kTable = {"# header", "row 1 32.67", "row 2 69.21", "row 3 8.00",
                      "# footer"};

TEST(CompareInOrder, TheSameLinesAreTheSame) {
  EXPECT_TRUE(compare_in_order(kTable, kTable).same);
}

TEST(CompareInOrder, AChangedDigitNamesTheShownAndPrintedLine) {
  Lines shown = kTable;
  shown[2] = "row 2 69.31";
  const Difference d = compare_in_order(shown, kTable);
  EXPECT_FALSE(d.same);
  EXPECT_EQ(d.shown_index, 2u);
  EXPECT_THAT(d.why, HasSubstr("`row 2 69.31`"));
  EXPECT_THAT(d.why, HasSubstr("`row 2 69.21`"));
}

TEST(CompareInOrder, TrailingBlanksAndBlankLinesAtTheEndDoNotCount) {
  Lines printed = kTable;
  printed[1] += "   ";
  printed.push_back("");
  EXPECT_TRUE(compare_in_order(kTable, printed).same);
}

TEST(CompareInOrder, MoreOrFewerLinesThanShownDiffer) {
  Lines printed = kTable;
  printed.push_back("# one more");
  const Difference more = compare_in_order(kTable, printed);
  EXPECT_FALSE(more.same);
  EXPECT_THAT(more.why, HasSubstr("`# one more`"));
  const Difference fewer = compare_in_order(printed, kTable);
  EXPECT_FALSE(fewer.same);
  EXPECT_EQ(fewer.shown_index, 5u);
  EXPECT_THAT(fewer.why, HasSubstr("nothing more"));
}

TEST(CompareInOrder, AGapStandsForAnyLinesBetween) {
  EXPECT_TRUE(compare_in_order({"# header", "...", "# footer"}, kTable).same);
  EXPECT_TRUE(compare_in_order({"...", "row 3 8.00", "# footer"}, kTable).same);
  EXPECT_TRUE(
      compare_in_order({"# header", "row 1 32.67", "..."}, kTable).same);
  EXPECT_TRUE(compare_in_order({"..."}, kTable).same);
  // Without the gap the omitted lines are missing.
  EXPECT_FALSE(compare_in_order({"# header", "# footer"}, kTable).same);
  // A gap at one end only: the other end is anchored.
  EXPECT_FALSE(compare_in_order({"row 1 32.67", "..."}, kTable).same);
  EXPECT_FALSE(compare_in_order({"...", "row 3 8.00"}, kTable).same);
}

TEST(CompareInOrder, AnExcerptsRowsMustAppearInOrder) {
  EXPECT_TRUE(compare_in_order(
                  {"...", "row 1 32.67", "...", "row 3 8.00", "..."}, kTable)
                  .same);
  const Difference swapped = compare_in_order(
      {"...", "row 3 8.00", "...", "row 1 32.67", "..."}, kTable);
  EXPECT_FALSE(swapped.same);
  EXPECT_EQ(swapped.shown_index, 3u);
  // A row the output does not have is named, with the nearest printed line.
  const Difference wrong =
      compare_in_order({"...", "row 2 69.21", "row 3 8.01", "..."}, kTable);
  EXPECT_FALSE(wrong.same);
  EXPECT_EQ(wrong.shown_index, 2u);
  EXPECT_THAT(wrong.why, HasSubstr("`row 3 8.00`"));
  const Difference alone =
      compare_in_order({"...", "row 3 8.01", "..."}, kTable);
  EXPECT_FALSE(alone.same);
  EXPECT_EQ(alone.shown_index, 1u);
  EXPECT_THAT(alone.why, HasSubstr("but printed `row 3 8.00`"));
}

TEST(CompareInOrder, OnlyWhatVariesIsMasked) {
  EXPECT_TRUE(compare_in_order({"rank 0 (pid 20651): exited 0"},
                               {"rank 0 (pid 4242): exited 0"})
                  .same);
  EXPECT_TRUE(compare_in_order({"wall time: 9.83 s, 1017.0 seeds/s"},
                               {"wall time: 12.01 s, 832.6 seeds/s"})
                  .same);
  EXPECT_TRUE(compare_in_order({"  local address:  PSN 0x600ef1, GID ::1"},
                               {"  local address:  PSN 0x12ab34, GID ::1"})
                  .same);
  EXPECT_TRUE(
      compare_in_order({"JACCL_COORDINATOR=127.0.0.1:46705",
                        "WEFT_SIM_SERVER=/tmp/weft-sim-dneb0D/socket",
                        "LD_LIBRARY_PATH=/tmp/weft/build/default/sim/dropin"},
                       {"JACCL_COORDINATOR=127.0.0.1:38471",
                        "WEFT_SIM_SERVER=/tmp/weft-sim-ASE4jH/socket",
                        "LD_LIBRARY_PATH=build/default/sim/dropin"})
          .same);
  EXPECT_FALSE(compare_in_order({"WEFT_SIM_SERVER=/tmp/weft-sim-dneb0D/socket"},
                                {"WEFT_SIM_SERVER=/tmp/weft-sim-dneb0D/sock"})
                   .same);
  // launch --fabric=tcp: the hostfile's loopback ports and the secret.
  const std::string secret_a(64, 'a'), secret_b(64, '7');
  EXPECT_TRUE(compare_in_order({"[[\"127.0.0.1:41000\"],[\"127.0.0.1:41001\"]]",
                                "WEFT_SECRET=" + secret_a},
                               {"[[\"127.0.0.1:52113\"],[\"127.0.0.1:38020\"]]",
                                "WEFT_SECRET=" + secret_b})
                  .same);
  EXPECT_FALSE(
      compare_in_order({"[[\"127.0.0.1:41000\"]]"}, {"[[\"127.0.0.2:41000\"]]"})
          .same);
  EXPECT_FALSE(compare_in_order({"WEFT_SECRET=" + secret_a},
                                {"WEFT_SECRET=" + secret_a.substr(2)})
                   .same);
  // Exit codes, virtual times and hashes are not masked.
  EXPECT_FALSE(compare_in_order({"rank 0 (pid 20651): exited 0"},
                                {"rank 0 (pid 4242): exited 1"})
                   .same);
  EXPECT_FALSE(compare_in_order({"finished at virtual time 928.000 us"},
                                {"finished at virtual time 928.001 us"})
                   .same);
  EXPECT_FALSE(compare_in_order({"trace hash: 55d04c110a77d895"},
                                {"trace hash: 55d04c110a77d896"})
                   .same);
}

// One side of a weft-bench row: time (us), algbw = busbw (GB/s), #wrong.
struct Side {
  const char* time;
  const char* bandwidth;
  int wrong;
};

// A row of weft-bench's table, in its column widths.
std::string bench_row(int bytes, int count, const char* type, Side out,
                      Side in) {
  return absl::StrFormat("%12d%14d%10s     sum      -1%9s%8s%8s%8d%9s%8s%8s%8d",
                         bytes, count, type, out.time, out.bandwidth,
                         out.bandwidth, out.wrong, in.time, in.bandwidth,
                         in.bandwidth, in.wrong);
}

TEST(WallClockMask, TimingsOfABenchRowAreMaskedTheRestCounts) {
  const Side out{"351.45", "0.01", 0};
  const Side in{"231.80", "0.02", 0};
  const std::string row = bench_row(4096, 1024, "float", out, in);
  const std::string slower = bench_row(4096, 1024, "float", {"1091.93", "0.02", 0},
                                       {"248.42", "0.07", 0});
  EXPECT_EQ(masked_wall_clock(row), masked_wall_clock(slower));
  EXPECT_NE(masked_wall_clock(row), row);
  // A wrong element, another size or another type still differs.
  const std::string wrong =
      bench_row(4096, 1024, "float", {"351.45", "0.01", 3}, in);
  const std::string other_size = bench_row(16384, 4096, "float", out, in);
  const std::string other_type = bench_row(4096, 1024, "double", out, in);
  EXPECT_NE(masked_wall_clock(row), masked_wall_clock(wrong));
  EXPECT_NE(masked_wall_clock(row), masked_wall_clock(other_size));
  EXPECT_NE(masked_wall_clock(row), masked_wall_clock(other_type));
  EXPECT_EQ(masked_wall_clock("# Avg bus bandwidth    : 0.112868"),
            masked_wall_clock("# Avg bus bandwidth    : 3.5"));
  EXPECT_NE(masked_wall_clock("# #wrong total         : 0"),
            masked_wall_clock("# #wrong total         : 1"));
  // Lines that are not a row are left as they are.
  EXPECT_EQ(masked_wall_clock("weft-sim: finished at virtual time 15.237 us"),
            "weft-sim: finished at virtual time 15.237 us");
}

TEST(Markers, RunLaunchAndExemptWithAReason) {
  EXPECT_EQ(marker_of("<!-- doc-test: run -->").kind, Kind::kRun);
  EXPECT_EQ(marker_of("  <!-- doc-test: launch -->").kind, Kind::kLaunch);
  EXPECT_FALSE(marker_of("<!-- doc-test: launch -->").wall_clock);
  const Marker wall = marker_of("<!-- doc-test: launch: wall clock -->");
  EXPECT_EQ(wall.kind, Kind::kLaunch);
  EXPECT_TRUE(wall.wall_clock);
  EXPECT_EQ(marker_of("<!-- doc-test: launch: fast -->").kind, Kind::kBad);
  const Marker exempt = marker_of("<!-- doc-test: exempt: source excerpt -->");
  EXPECT_EQ(exempt.kind, Kind::kExempt);
  EXPECT_EQ(exempt.reason, "source excerpt");
  EXPECT_EQ(marker_of("<!-- doc-test: exempt: -->").kind, Kind::kBad);
  EXPECT_EQ(marker_of("<!-- doc-test: runs -->").kind, Kind::kBad);
  EXPECT_EQ(marker_of("<!-- doc-test: run").kind, Kind::kBad);
  EXPECT_EQ(marker_of("Some text.").kind, Kind::kNone);
  EXPECT_EQ(marker_of("<!-- a comment -->").kind, Kind::kNone);
}

TEST(Blocks, EachFenceWithTheMarkerBeforeIt) {
  const std::string page =
      "text\n"
      "<!-- doc-test: run -->\n"
      "```\n"
      "$ weft-sim --seed 5 \\\n"
      "    --ranks=4\n"
      "out 1\n"
      "$ echo $?\n"
      "0\n"
      "```\n"
      "\n"
      "```sh\n"
      "scripts/test.sh\n"
      "```\n"
      "- item:\n"
      "  <!-- doc-test: exempt: setup command -->\n"
      "  ```sh\n"
      "  scripts/setup.sh\n"
      "  ```\n";
  const std::vector<Block> blocks = blocks_of("p.md", page);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].where(), "p.md:3");
  EXPECT_EQ(blocks[0].marker.kind, Kind::kRun);
  EXPECT_EQ(blocks[1].marker.kind, Kind::kNone);  // a blank line before
  EXPECT_EQ(blocks[2].marker.kind, Kind::kExempt);
  EXPECT_EQ(blocks[2].body, Lines{"  scripts/setup.sh"});

  const std::vector<Step> steps = steps_of(blocks[0].body);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].command, "weft-sim --seed 5 --ranks=4");
  EXPECT_EQ(steps[0].shown, Lines{"out 1"});
  EXPECT_EQ(steps[0].shown_at, std::vector<size_t>{2});
  EXPECT_EQ(steps[1].command, "echo $?");
  EXPECT_EQ(steps[1].shown, Lines{"0"});
}

TEST(RepositoryPaths, ProsePathsFromARootWithoutLineAnchorOrPunctuation) {
  const std::set<std::string> roots = {"docs", "sim", "tests", "README.md"};
  const std::string page =
      "See `sim/world.h:42`, docs/faults.md#recovery, [a](docs/x.md).\n"
      "Also (sim/prng.h, \"tests/fuzz/\"); README.md and `sim/faults.h:3-9`.\n"
      "<!-- doc-test: exempt: source excerpt -->\n"
      "```\n"
      "#include \"sim/in_a_block.h\"\n"
      "```\n"
      "| `tests/a.cc` | x=sim/b.h |\n";
  const std::vector<NamedPath> paths = repository_paths_of(page, roots);
  std::vector<std::string> named;
  for (const NamedPath& p : paths) named.push_back(p.path);
  EXPECT_EQ(named,
            (Lines{"sim/world.h", "docs/faults.md", "docs/x.md", "sim/prng.h",
                   "tests/fuzz/", "sim/faults.h", "tests/a.cc", "sim/b.h"}));
  ASSERT_EQ(paths.size(), 8u);
  EXPECT_EQ(paths[0].line, 1u);
  EXPECT_EQ(paths[3].line, 2u);
  EXPECT_EQ(paths[6].line, 7u);
}

TEST(RepositoryPaths, PatternsBuildAndInstallTreesAndOtherProjectsAreLeftOut) {
  const std::set<std::string> roots = {"examples", "tests", "sim"};
  const std::string page =
      "`tests/fuzz/<name>_fuzz.cc`, `tests/*.cc`, `tests/{a,b}.cc`,\n"
      "`tests/fuzz/corpus/NAME`, `sim/OUT_DIR/x.json`, `tests/...`,\n"
      "`$PREFIX/lib/x`, `build/default/bin/weft-sim`, `include/weft/sim/x.h`,\n"
      "`lib/pkgconfig`, `weft/sim/world.h`, `mlx/distributed/jaccl/`,\n"
      "MLX's [`examples/cpp/distributed.cpp`](https://github.com/m/x.cpp).\n";
  EXPECT_THAT(repository_paths_of(page, roots), ::testing::IsEmpty());
  // A link into the repository is checked like any other path.
  const std::vector<NamedPath> linked =
      repository_paths_of("[an example](examples/a.cc)", roots);
  ASSERT_EQ(linked.size(), 1u);
  EXPECT_EQ(linked[0].path, "examples/a.cc");
}

TEST(RepositoryPaths, RootsLeaveOutGitBuildTreesAndInstallRoots) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / absl::StrCat("weft-doc-roots-", ::getpid());
  for (const char* d : {".git", "build", "build-examples", "include", "lib",
                        "docs", "sim", ".ci"}) {
    fs::create_directories(dir / d);
  }
  std::ofstream(dir / "README.md") << "# weft\n";
  const std::set<std::string> roots = repository_roots(dir.string());
  fs::remove_all(dir);
  EXPECT_EQ(roots, (std::set<std::string>{".ci", "README.md", "docs", "sim"}));
}

// A page with two run blocks and the paragraphs around them.
const char kFiguresPage[] =
    "Far away: 1.11 us.\n"                         // 1
    "\n"                                           // 2
    "The run takes 852.87 us, 68.85 GB/s:\n"       // 3
    "\n"                                           // 4
    "<!-- doc-test: run -->\n"                     // 5
    "```\n"                                        // 6
    "$ weft-bench\n"                               // 7
    "    33554432   852.87   39.34   68.85\n"      // 8
    "```\n"                                        // 9
    "\n"                                           // 10
    "Between: 19.78 GB/s, two 9.9 GB/s cables,\n"  // 11
    "a 2.7 ms median, and 0.97 of the model.\n"    // 12
    "<!-- doc-test: run -->\n"                     // 13
    "```\n"                                        // 14
    "$ weft-bench --model\n"                       // 15
    "    16777216  1484.24   11.30   19.78\n"      // 16
    "```\n"                                        // 17
    "After: 1484.24 us and 168.785 GB/s.\n"        // 18
    "\n"                                           // 19
    "Far away again: 2.22 us.\n";                  // 20

TEST(QuotedFigures, TwoDecimalTimesAndBandwidthsBesideARunBlock) {
  const std::string page = kFiguresPage;
  const std::vector<Block> blocks = blocks_of("p.md", page);
  const std::vector<QuotedFigure> figures =
      figures_beside_run_blocks(page, blocks);
  std::vector<std::string> quoted;
  for (const QuotedFigure& f : figures) {
    quoted.push_back(
        absl::StrCat(f.line, ": ", f.figure, " beside ", f.beside.size()));
  }
  // Not 9.9 GB/s or 2.7 ms (other precision), 0.97 (no unit), 168.785
  // (three decimals), nor the far paragraphs' figures.
  EXPECT_EQ(quoted,
            (Lines{"3: 852.87 us beside 1", "3: 68.85 GB/s beside 1",
                   "11: 19.78 GB/s beside 2", "18: 1484.24 us beside 1"}));
  ASSERT_EQ(figures.size(), 4u);
  EXPECT_EQ(figures[0].number, "852.87");
  EXPECT_EQ(figures[0].beside[0], &blocks[0]);
  EXPECT_EQ(figures[3].beside[0], &blocks[1]);
}

TEST(QuotedFigures, ABlockShowsAWholeNumberOnly) {
  const Lines body = {"    33554432   852.87   39.34   68.85"};
  EXPECT_TRUE(shows_number(body, "852.87"));
  EXPECT_TRUE(shows_number(body, "68.85"));
  EXPECT_FALSE(shows_number(body, "853.75"));
  EXPECT_FALSE(shows_number(body, "52.87"));  // inside 852.87
  EXPECT_FALSE(shows_number(body, "852.8"));  // a prefix of it
  EXPECT_FALSE(shows_number(body, "34.68"));  // no such number
  EXPECT_FALSE(shows_number({"1.001"}, "1.00"));
}

}  // namespace
}  // namespace weft::testing::docs
