// The include-what-you-use check: a standard or Abseil name used without
// its header is flagged at its first use, unless the file or its own header
// includes it; comments, literals and other namespaces' names are not uses.
#include "tools/include-check/iwyu_scan.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/include_check/fake_tree.h"
#include "tools/include-check/iwyu_table.h"

namespace weft::tools::include_check {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "line: name -> header" for each finding of `text` with its own includes.
std::vector<std::string> findings(std::string_view text,
                                  std::vector<std::string> extra = {}) {
  for (const IncludeDirective& include : includes_of(text)) {
    extra.push_back(include.name);
  }
  std::vector<std::string> out;
  for (const IwyuFinding& f : scan_for_iwyu(text, extra)) {
    out.push_back(std::to_string(f.line) + ": " + f.name + " -> " + f.header);
  }
  return out;
}

std::vector<std::string> errors_of(const Report& report) {
  std::vector<std::string> lines;
  for (const Diagnostic& error : report.errors) lines.push_back(format(error));
  return lines;
}

TEST(IwyuScan, MissingIncludeIsFlaggedWithTheMessage) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim/world.cc",
             "#include \"sim/world.h\"\n"
             "#include <string>\n"
             "std::vector<std::string> names;\n");
  EXPECT_THAT(errors_of(tree.check_iwyu()),
              ElementsAre("sim/world.cc:3: uses std::vector without #include "
                          "<vector>; include it (current libraries no longer "
                          "include it for you)"));
}

TEST(IwyuScan, AbseilNamesAskForTheirQuotedHeader) {
  IwyuFinding finding{7, "absl::StrAppend", "absl/strings/str_cat.h"};
  EXPECT_EQ(iwyu_message(finding),
            "uses absl::StrAppend without #include \"absl/strings/str_cat.h\"; "
            "include it (current libraries no longer include it for you)");
  EXPECT_THAT(findings("#include \"absl/strings/str_format.h\"\n"
                       "void f(std::string* s) {\n"
                       "  absl::StrAppendFormat(s, \"%d\", 1);\n"
                       "  absl::StrAppend(s, \"x\");\n"
                       "}\n",
                       {"string"}),
              ElementsAre("4: absl::StrAppend -> absl/strings/str_cat.h"));
}

TEST(IwyuScan, TheIncludeInTheFilesOwnHeaderCounts) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim/world.h", "#include <vector>\n#include <memory>\n");
  tree.write("sim/world.cc",
             "#include \"sim/world.h\"\n"
             "std::vector<int> v;\n"
             "auto p = std::make_unique<int>(1);\n");
  EXPECT_THAT(errors_of(tree.check_iwyu()), IsEmpty());
}

TEST(IwyuScan, AnotherHeadersIncludeDoesNotCount) {
  FakeTree tree;
  tree.add_layers();
  tree.write("fabric/fabric.h", "#include <vector>\nstd::vector<int> f();\n");
  tree.write("sim/world.cc",
             "#include \"fabric/fabric.h\"\n"
             "std::vector<int> v = f();\n");
  EXPECT_THAT(
      errors_of(tree.check_iwyu()),
      ElementsAre(::testing::StartsWith(
          "sim/world.cc:2: uses std::vector without #include <vector>")));
}

TEST(IwyuScan, NamesInCommentsAndStringsAreIgnored) {
  EXPECT_THAT(findings("// std::vector<int> is what we return\n"
                       "/* absl::StrCat(a, b)\n   std::map */\n"
                       "const char* k = \"std::unique_ptr<int>\";\n"
                       "const char* r = R\"(std::optional<int>)\";\n"),
              IsEmpty());
}

TEST(IwyuScan, StringViewDoesNotDemandString) {
  EXPECT_THAT(findings("#include <string_view>\n"
                       "std::string_view name();\n"),
              IsEmpty());
  EXPECT_THAT(findings("#include <string_view>\n"
                       "std::string name();\n"),
              ElementsAre("2: std::string -> string"));
  EXPECT_THAT(findings("#include <string>\n"
                       "std::string_view name();\n"),
              ElementsAre("2: std::string_view -> string_view"));
}

TEST(IwyuScan, AUseInsideAMacroBodyCounts) {
  EXPECT_THAT(findings("#define WEFT_MAKE(x) \\\n"
                       "  do { \\\n"
                       "    auto p = std::make_unique<int>(x); \\\n"
                       "  } while (0)\n"),
              ElementsAre("3: std::make_unique -> memory"));
}

TEST(IwyuScan, OtherDirectivesAreNotUses) {
  EXPECT_THAT(findings("#if defined(offsetof) && \\\n"
                       "    defined(errno)\n"
                       "#endif\n"
                       "#include <vector>\n"),
              IsEmpty());
}

TEST(IwyuScan, CHeadersCountForTheirCplusplusForms) {
  EXPECT_THAT(findings("#include <stdint.h>\n#include <string.h>\n"
                       "uint64_t a; std::uint8_t b;\n"
                       "void f() { std::memcpy(&a, &b, 1); }\n"),
              IsEmpty());
  EXPECT_THAT(findings("#include <errno.h>\nint e() { return errno; }\n"),
              IsEmpty());
}

TEST(IwyuScan, FixedWidthIntegersNeedCstdintInBothSpellings) {
  EXPECT_THAT(findings("uint64_t a;\n"), ElementsAre("1: uint64_t -> cstdint"));
  EXPECT_THAT(findings("std::int_least8_t a;\n"),
              ElementsAre("1: std::int_least8_t -> cstdint"));
  EXPECT_THAT(findings("::uintptr_t a;\n"),
              ElementsAre("1: uintptr_t -> cstdint"));
  EXPECT_THAT(findings("size_t a; int b; uint64_type c; x.int64_t d;\n"),
              IsEmpty());
}

TEST(IwyuScan, OneFindingPerHeaderAtItsFirstUse) {
  EXPECT_THAT(
      findings("#include <cstdint>\n"
               "std::unique_ptr<int> a;\n"
               "std::shared_ptr<int> b;\n"
               "std::vector<int> c;\n"
               "std::vector<uint8_t> d;\n"),
      ElementsAre("2: std::unique_ptr -> memory", "4: std::vector -> vector"));
}

TEST(IwyuScan, OnlyTheNamespaceOfTheTableCounts) {
  EXPECT_THAT(findings("weft::vector<int> a;\n"
                       "int m = std::numeric_limits<int>::max();\n"
                       "auto s = queue.find(x);\n"
                       "auto t = pool->free(b);\n"
                       "absl::Statuses u; mystd::map<int, int> w;\n",
                       {"limits"}),
              IsEmpty());
}

TEST(IwyuScan, StdMoveNeedsUtilityOrAlgorithmByItsArguments) {
  EXPECT_THAT(findings("auto b = std::move(a);\n"),
              ElementsAre("1: std::move -> utility"));
  EXPECT_THAT(findings("std::move(a.begin(), a.end(),\n"
                       "          out.begin());\n"),
              ElementsAre("1: std::move -> algorithm"));
  EXPECT_THAT(findings("#include <utility>\nauto b = std::move(f(a, c));\n"),
              IsEmpty());
}

TEST(IwyuScan, StatusErrorsAndPredicatesNeedStatusH) {
  EXPECT_THAT(
      findings("#include \"absl/status/statusor.h\"\n"
               "absl::StatusOr<int> f() {\n"
               "  if (absl::IsNotFound(s)) return absl::NotFoundError(\"x\");\n"
               "}\n"),
      ElementsAre("3: absl::IsNotFound -> absl/status/status.h"));
  EXPECT_THAT(findings("#include \"absl/status/status.h\"\n"
                       "absl::Status f() { return absl::InternalError(\"\"); "
                       "}\n"),
              IsEmpty());
}

TEST(IwyuScan, OstreamComesWithIostreamOrIosfwd) {
  EXPECT_THAT(findings("#include <iosfwd>\nvoid f(std::ostream* os);\n"),
              IsEmpty());
  EXPECT_THAT(findings("#include <iostream>\nvoid f(std::ostream* os);\n"),
              IsEmpty());
  EXPECT_THAT(findings("#include <sstream>\nvoid f(std::ostream* os);\n"),
              ElementsAre("2: std::ostream -> ostream"));
}

TEST(IwyuScan, NameUsesCarryTheirQualifiers) {
  std::vector<std::string> seen;
  for (const NameUse& use :
       name_uses("::std :: chrono::seconds s; x.y; p->q; T<int>::max")) {
    seen.push_back(std::string(use.qualifier) + "|" + std::string(use.name));
  }
  EXPECT_THAT(seen,
              ElementsAre("::|std", "std|chrono", "chrono|seconds", "|s", "|x",
                          ".|y", "|p", ".|q", "|T", "|int", ">|max"));
}

TEST(IwyuCheck, EveryFileOfEveryTargetIsChecked) {
  FakeTree tree;
  tree.add_layers();
  tree.add_target({"weft_sim_linux", "STATIC_LIBRARY", "sim/linux", "", "", "",
                   "epoll.cc", /*linux_only=*/true});
  tree.write("sim/linux/epoll.cc", "std::optional<int> o;\n");
  tree.write("collectives/engine/lane.h", "std::array<int, 2> a;\n");
  tree.write("scratch/notes.cc", "std::vector<int> v;\n");
  Report report = tree.check_iwyu();
  EXPECT_THAT(report.notes,
              ElementsAre("skipped scratch/: no target in this configuration"));
  EXPECT_THAT(
      errors_of(report),
      ElementsAre(
          ::testing::StartsWith("collectives/engine/lane.h:1: uses std::array "
                                "without #include <array>"),
          ::testing::StartsWith("sim/linux/epoll.cc:1: uses std::optional "
                                "without #include <optional>")));
  EXPECT_EQ(report.files_checked, 11);
}

// A folder with a CMakeLists.txt of its own inside a unit's home (a part
// built only where an optional library is installed) belongs to no target
// when it made none: skipped and named, not checked as the parent's.
TEST(IwyuCheck, AFolderWithItsOwnCMakeListsAndNoTargetIsSkipped) {
  FakeTree tree;
  tree.add_layers();
  tree.write("sim/optional/CMakeLists.txt", "# built where a library is\n");
  tree.write("sim/optional/uses_it.cc", "std::vector<int> v;\n");
  tree.write("sim/plain/notes.cc", "std::vector<int> v;\n");
  Report report = tree.check_iwyu();
  EXPECT_THAT(report.notes,
              ElementsAre("skipped sim/optional/: no target in this "
                          "configuration"));
  // sim/plain/ has no CMakeLists.txt: its file is the sim unit's, checked.
  EXPECT_THAT(errors_of(report),
              ElementsAre(::testing::StartsWith(
                  "sim/plain/notes.cc:1: uses std::vector without")));
}

}  // namespace
}  // namespace weft::tools::include_check
