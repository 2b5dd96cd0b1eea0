// The declared-graph rules over tiny trees: what a target may include
// (its own folder, public headers of what it links, anything of what it
// declares white-box) and the one-line message for what it may not.
#include "tools/include-check/include_rules.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/include_check/fake_tree.h"
#include "tools/include-check/manifest.h"

namespace weft::tools::include_check {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

std::vector<std::string> errors_of(const Report& report) {
  std::vector<std::string> lines;
  for (const Diagnostic& error : report.errors) lines.push_back(format(error));
  return lines;
}

TEST(IncludeRules, PublicHeadersAcrossDeclaredLinksPass) {
  FakeTree tree;
  tree.add_layers();
  // weft::fabric comes through weft_sim's PUBLIC link.
  tree.write("tools/weft-devices/main.cc",
             "#include \"sim/world.h\"\n#include \"fabric/fabric.h\"\n"
             "#include <vector>\n");
  Report report = tree.check_graph();
  EXPECT_THAT(errors_of(report), IsEmpty());
  EXPECT_EQ(report.files_checked, 10);
}

TEST(IncludeRules, PlantedEngineIncludeInAToolFails) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-devices/main.cc",
             "// weft-devices\n#include \"sim/world.h\"\n"
             "#include \"collectives/engine/lane.h\"\n");
  EXPECT_THAT(
      errors_of(tree.check_graph()),
      ElementsAre("tools/weft-devices/main.cc:3: includes "
                  "\"collectives/engine/lane.h\", a private header of "
                  "weft_collectives (collectives/engine/); link "
                  "weft::collectives and include a public header, or declare "
                  "the target white-box (WEFT_WHITEBOX)"));
}

TEST(IncludeRules, PrivateHeaderOfALinkedTargetFails) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-devices/main.cc",
             "#include \"sim/internal/core.h\"\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("tools/weft-devices/main.cc:1: includes "
                        "\"sim/internal/core.h\", a private header of "
                        "weft_sim (sim/internal/); include a public header of "
                        "weft::sim instead"));
}

TEST(IncludeRules, HeaderOfATargetNotLinkedFails) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-devices/main.cc",
             "#include \"collectives/group.h\"\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("a header of weft_collectives (collectives/), which "
                        "weft-devices does not link; link weft::collectives"));
}

TEST(IncludeRules, LinkOnlyDependenciesAreNotOnTheIncludePath) {
  FakeTree tree;
  tree.add_layers();
  tree.write("harness/harness.h", "");
  tree.add_target({"weft_harness", "STATIC_LIBRARY", "harness", "weft::sim",
                   "$<LINK_ONLY:weft::sim>"});
  tree.add_target({.name = "bench",
                   .type = "EXECUTABLE",
                   .home = "bench",
                   .links = "weft_harness",
                   .sources = "bench.cc"});
  tree.write("bench/bench.cc",
             "#include \"harness/harness.h\"\n#include \"sim/world.h\"\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("bench/bench.cc:2: includes \"sim/world.h\""));
}

TEST(IncludeRules, ConditionalAndScopedLinksCount) {
  FakeTree tree;
  tree.add_layers();
  tree.add_target(
      {.name = "probe",
       .type = "EXECUTABLE",
       .home = "tools/probe",
       .links = "::@(0x5652d159b370);$<$<PLATFORM_ID:Linux>:weft::collectives>;"
                "::@",
       .sources = "probe.cc;other.cc"});
  tree.write("tools/probe/probe.cc", "#include \"collectives/group.h\"\n");
  tree.write("tools/probe/other.cc", "#include \"sim/world.h\"\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("other.cc:1: includes \"sim/world.h\""));
}

TEST(IncludeRules, WhiteboxAllowsInternalHeaders) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tests/collectives/lane_test.cc",
             "#include \"collectives/engine/lane.h\"\n");
  tree.add_target({"collectives_test", "EXECUTABLE", "tests/collectives",
                   "weft::collectives;GTest::gmock_main", "",
                   "weft_collectives", "lane_test.cc"});
  EXPECT_THAT(errors_of(tree.check_graph()), IsEmpty());
}

TEST(IncludeRules, InternalHeadersNeedWhitebox) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tests/collectives/lane_test.cc",
             "#include \"collectives/engine/lane.h\"\n");
  tree.add_target({"collectives_test", "EXECUTABLE", "tests/collectives",
                   "weft::collectives", "", "", "lane_test.cc"});
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("(WEFT_WHITEBOX weft_collectives)"));
}

TEST(IncludeRules, TheSameFolderUnitMayIncludeItsPrivateHeaders) {
  FakeTree tree;
  tree.add_layers();
  tree.write("collectives/group.cc",
             "#include \"collectives/group.h\"\n"
             "#include \"collectives/engine/lane.h\"\n");
  tree.write(
      "collectives/engine/lane.cc",
      "#include \"collectives/engine/lane.h\"\n#include \"lane.h\"\n"
      "#include \"collectives/group.h\"\n#include \"fabric/fabric.h\"\n");
  // A folder shared by two targets is one unit; a header next to the test
  // is found relative to it.
  tree.write("tests/collectives/fixture.h", "");
  tree.write("tests/collectives/a_test.cc", "#include \"fixture.h\"\n");
  tree.write("tests/collectives/b_test.cc",
             "#include \"tests/collectives/fixture.h\"\n");
  tree.add_target(
      {"a_test", "EXECUTABLE", "tests/collectives", "", "", "", "a_test.cc"});
  tree.add_target(
      {"b_test", "EXECUTABLE", "tests/collectives", "", "", "", "b_test.cc"});
  EXPECT_THAT(errors_of(tree.check_graph()), IsEmpty());
}

TEST(IncludeRules, AQuotedIncludeNamingNothingFails) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim/world.cc",
             "#include \"sim/wrold.h\"\n"
             "// #include \"sim/gone.h\" in a comment is not an include\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("sim/world.cc:1: includes \"sim/wrold.h\", "
                                   "which names no file of the repository"));
}

TEST(IncludeRules, HeadersOfAnExecutableAreNotShared) {
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-devices/report.h", "");
  tree.write("sim/world.cc", "#include \"tools/weft-devices/report.h\"\n");
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("a header of the executable weft-devices"));
}

TEST(IncludeRules, StraySourcesWarnAndFoldersWithoutTargetsAreSkipped) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim/forgotten.cc", "");
  tree.write("tests/arm/check.cc", "#include \"collectives/engine/lane.h\"\n");
  Report report = tree.check_graph();
  EXPECT_THAT(errors_of(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(
      format(report.warnings[0]),
      HasSubstr("sim/forgotten.cc: in sim/ but in no target's sources"));
  EXPECT_THAT(report.notes, ElementsAre("skipped tests/arm/: no target in this "
                                        "configuration"));
}

TEST(IncludeRules, AStraySourceIsNotJudgedByAGraphItIsNotIn) {
  // A test of a tool this configuration leaves out: it is in no target's
  // sources, and the tool's headers belong to no target either.
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-bench/run.h", "");
  tree.write("sim/bench_run_test.cc", "#include \"tools/weft-bench/run.h\"\n");
  Report report = tree.check_graph();
  EXPECT_THAT(errors_of(report), IsEmpty());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(format(report.warnings[0]),
              HasSubstr("sim/bench_run_test.cc: in sim/ but in no target's "
                        "sources"));
  // A compiled file with the same include is still an error.
  tree.write("sim/world.cc", "#include \"tools/weft-bench/run.h\"\n");
  EXPECT_THAT(errors_of(tree.check_graph()),
              ElementsAre(HasSubstr("belongs to no target")));
}

TEST(IncludeRules, AStraySourceIsNotJudgedByItsFolderMatesLinks) {
  // A rank program whose target is configured only beside weft-bench: in a
  // preset without it, the folder's other targets do not link what the
  // program includes, and that is not the program's fault.
  FakeTree tree;
  tree.add_layers();
  tree.write("tools/weft-devices/rank_program.cc",
             "#include \"collectives/group.h\"\n"
             "#include \"collectives/no_such_header.h\"\n");
  Report report = tree.check_graph();
  // An include naming no file is still wrong in any configuration.
  EXPECT_THAT(errors_of(report),
              ElementsAre(HasSubstr("rank_program.cc:2: includes "
                                    "\"collectives/no_such_header.h\", which "
                                    "names no file")));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(format(report.warnings[0]),
              HasSubstr("rank_program.cc: in tools/weft-devices/ but in no "
                        "target's sources"));
  // Compiled by weft-devices, the same include is judged by its links.
  tree.write("tools/weft-devices/main.cc", "#include \"collectives/group.h\"\n");
  EXPECT_THAT(errors_of(tree.check_graph()),
              UnorderedElementsAre(HasSubstr("rank_program.cc:2"),
                                   HasSubstr("main.cc:1: includes "
                                             "\"collectives/group.h\", a "
                                             "header of weft_collectives")));
}

TEST(IncludeRules, AHomeInsideAnotherHomeIsItsOwnUnit) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim_verbs/provider.cc",
             "#include \"sim/world.h\"\n#include \"sim/internal/core.h\"\n");
  tree.add_target({"weft_sim_verbs", "SHARED_LIBRARY", "sim_verbs", "weft::sim",
                   "", "", "provider.cc", true});
  std::vector<std::string> errors = errors_of(tree.check_graph());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0],
              HasSubstr("provider.cc:2: includes "
                        "\"sim/internal/core.h\", a private header"));
}

TEST(Manifest, MalformedRecordsAreBadInput) {
  std::string error;
  EXPECT_FALSE(parse_manifest("root\t/x\nbogus\t1\n", &error).has_value());
  EXPECT_EQ(error, "line 2: unknown record \"bogus\"");
  EXPECT_FALSE(parse_manifest("target\tname=x\n", &error).has_value());
  EXPECT_THAT(error, HasSubstr("needs name=, type= and home="));
  EXPECT_FALSE(parse_manifest("", &error).has_value());
  EXPECT_THAT(error, HasSubstr("no root record"));
}

}  // namespace
}  // namespace weft::tools::include_check
