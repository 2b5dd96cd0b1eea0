// The doc test's own rules: markers, blocks, commands, and the comparison
// of a block with what its commands printed (masks, "...", excerpts).
#include "doc_blocks.h"

#include <string>
#include <vector>

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

TEST(Markers, RunLaunchAndExemptWithAReason) {
  EXPECT_EQ(marker_of("<!-- doc-test: run -->").kind, Kind::kRun);
  EXPECT_EQ(marker_of("  <!-- doc-test: launch -->").kind, Kind::kLaunch);
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

}  // namespace
}  // namespace weft::testing::docs
