// The namespace rules over tiny trees: which namespaces a folder's files
// may open (its targets' public and private ones), the one-line message for
// one they may not, and the ban on Abseil's internals.
#include "tools/include-check/namespace_rules.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/include_check/fake_tree.h"

namespace weft::tools::include_check {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> errors_of(const Report& report) {
  std::vector<std::string> lines;
  for (const Diagnostic& error : report.errors) lines.push_back(format(error));
  return lines;
}

std::vector<std::string> names_of(std::string_view code) {
  std::vector<std::string> names;
  for (const OpenedNamespace& n : opened_namespaces(code)) {
    names.push_back(std::to_string(n.line) + " " + n.name);
  }
  return names;
}

// weft_collectives (public `weft`, private weft::collectives::internal)
// in collectives/ with a private wing engine/, and weft_sim (weft::sim) in
// sim/.
void add_rooms(FakeTree& tree) {
  tree.write("collectives/group.cc", "");
  tree.write("collectives/engine/lane.h", "");
  tree.write("sim/world.h", "");
  tree.add_target({.name = "weft_collectives",
                   .home = "collectives",
                   .sources = "group.cc",
                   .namespace_name = "weft",
                   .private_namespace = "weft::collectives::internal"});
  tree.add_target({.name = "weft_sim",
                   .home = "sim",
                   .namespace_name = "weft::sim",
                   .private_namespace = "weft::sim::internal"});
}

TEST(OpenedNamespaces, NestedQualifiedAnonymousAndAliases) {
  EXPECT_THAT(names_of("namespace weft {\n"
                       "namespace collectives::internal { class Engine; }\n"
                       "namespace {\nint x;\n}\n"
                       "namespace fs = std::filesystem;\n"
                       "}\n"
                       "namespace weft::sim::internal {\n}\n"),
              ElementsAre("1 weft", "2 weft::collectives::internal",
                          "8 weft::sim::internal"));
}

TEST(OpenedNamespaces, UsingDirectivesAndBlocksAreNoDeclarations) {
  EXPECT_THAT(names_of("using namespace std;\n"
                       "void f() {\n  struct S { };\n}\n"
                       "#define OPEN namespace x {\n"
                       "namespace a::inline b { }\n"),
              ElementsAre("6 a::b"));
}

TEST(NamespaceRules, EachFolderInItsOwnNamespacesPasses) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("collectives/group.cc",
             "namespace weft {\nnamespace collectives::internal {\n}\n}\n");
  tree.write("collectives/engine/lane.h",
             "namespace weft::collectives::internal::detail {\n}\n");
  tree.write("sim/world.h",
             "namespace weft::sim {\nnamespace faults {\n}\n}\n");
  Report report = tree.check_namespaces();
  EXPECT_THAT(errors_of(report), IsEmpty());
  EXPECT_EQ(report.files_checked, 3);
}

TEST(NamespaceRules, APlantedSharedPrivateNamespaceFails) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("collectives/engine/lane.h",
             "// lane\nnamespace weft::internal {\n}\n");
  EXPECT_THAT(errors_of(tree.check_namespaces()),
              ElementsAre("collectives/engine/lane.h:2: namespace "
                          "weft::internal is not this folder's (collectives/ "
                          "is weft): a qualified name must say which room "
                          "owns it; use weft for public names, "
                          "weft::collectives::internal for private code"));
}

TEST(NamespaceRules, AnotherRoomsNamespaceFails) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("sim/world.h", "namespace weft::collectives::internal {\n}\n");
  EXPECT_THAT(errors_of(tree.check_namespaces()),
              ElementsAre(HasSubstr("sim/world.h:1: namespace "
                                    "weft::collectives::internal is not this "
                                    "folder's (sim/ is weft::sim)")));
}

TEST(NamespaceRules, NothingNestedDirectlyInSharedWeft) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("collectives/group.cc", "namespace weft::engine {\n}\n");
  EXPECT_THAT(errors_of(tree.check_namespaces()),
              ElementsAre(HasSubstr("namespace weft::engine is not this "
                                    "folder's")));
}

TEST(NamespaceRules, FoldersWithoutANamespaceAreSkipped) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("tests/sim/world_test.cc", "namespace weft::sim::internal {\n}\n");
  tree.add_target({.name = "sim_test",
                   .type = "EXECUTABLE",
                   .home = "tests/sim",
                   .sources = "world_test.cc"});
  EXPECT_THAT(errors_of(tree.check_namespaces()), IsEmpty());
}

TEST(NamespaceRules, DifferentNamespacesInOneFolderFail) {
  FakeTree tree;
  add_rooms(tree);
  tree.add_target({.name = "weft_sim_extra",
                   .home = "sim",
                   .namespace_name = "weft::simulator",
                   .private_namespace = "weft::simulator::internal"});
  EXPECT_THAT(errors_of(tree.check_namespaces()),
              ElementsAre(HasSubstr("sim/: the targets of this folder declare "
                                    "different namespaces")));
}

TEST(AbseilInternals, IncludesAndNamesFailEverywhere) {
  FakeTree tree;
  add_rooms(tree);
  tree.write("tests/sim/world_test.cc",
             "#include \"absl/flags/internal/usage.h\"\n"
             "#include \"absl/flags/usage.h\"\n"
             "// absl::flags_internal in a comment is fine\n"
             "void f() { absl::flags_internal::FlagsHelp(); }\n"
             "const char* s = \"absl::base_internal\";\n");
  tree.add_target({.name = "sim_test",
                   .type = "EXECUTABLE",
                   .home = "tests/sim",
                   .sources = "world_test.cc"});
  EXPECT_THAT(
      errors_of(tree.check_namespaces()),
      ElementsAre(HasSubstr("tests/sim/world_test.cc:1: #include "
                            "<absl/flags/internal/usage.h>: Abseil's internal "
                            "headers change without notice"),
                  HasSubstr("tests/sim/world_test.cc:4: "
                            "absl::flags_internal: Abseil's internal "
                            "namespaces change without notice")));
}

}  // namespace
}  // namespace weft::tools::include_check
