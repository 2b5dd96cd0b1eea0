// The Darwin portability scan: Linux-only names and headers are found in
// code a macOS build compiles, and not in blocks Darwin's macros guard
// away, comments or string literals.
#include "tools/include-check/darwin_scan.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/include_check/fake_tree.h"

namespace weft::tools::include_check {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// "line: what" for each finding.
std::vector<std::string> findings(std::string_view text) {
  std::vector<std::string> out;
  for (const DarwinFinding& f : scan_for_darwin(text).findings) {
    out.push_back(std::to_string(f.line) + ": " + f.what);
  }
  return out;
}

TEST(DarwinScan, UnguardedMadvHugepageFails) {
  EXPECT_THAT(findings("#include <sys/mman.h>\n"
                       "void f(void* p) { madvise(p, 1, MADV_HUGEPAGE); }\n"),
              ElementsAre("2: MADV_HUGEPAGE"));
}

TEST(DarwinScan, MessageSaysWhatToDo) {
  EXPECT_EQ(darwin_message({36, "MADV_HUGEPAGE", false}),
            "MADV_HUGEPAGE is not on macOS; guard it (#ifdef MADV_HUGEPAGE / "
            "#if defined(__linux__)) or mark the target WEFT_LINUX_ONLY");
  EXPECT_EQ(darwin_message({1, "accept4", false}),
            "accept4 is not on macOS; guard it (#if defined(__linux__)) or "
            "mark the target WEFT_LINUX_ONLY");
}

TEST(DarwinScan, IfdefOfTheNameItselfPasses) {
  EXPECT_THAT(findings("#ifdef MADV_HUGEPAGE\n"
                       "  (void)madvise(p, n, MADV_HUGEPAGE);\n"
                       "#endif\n"
                       "#if defined(MAP_POPULATE) && MAP_POPULATE\n"
                       "  flags |= MAP_POPULATE;\n"
                       "#endif\n"),
              IsEmpty());
}

TEST(DarwinScan, LinuxBranchPassesAndTheElseBranchIsScanned) {
  EXPECT_THAT(findings("#if defined(__linux__)\n"
                       "  fd = accept4(s, nullptr, nullptr, SOCK_CLOEXEC);\n"
                       "#else\n"
                       "  fd = accept(s, nullptr, nullptr);\n"
                       "  ok = pipe2(fds, 0);\n"
                       "#endif\n"),
              ElementsAre("5: pipe2"));
}

TEST(DarwinScan, AppleBranchWithALinuxElsePasses) {
  EXPECT_THAT(findings("#ifdef __APPLE__\n"
                       "#include <sys/event.h>\n"
                       "#else\n"
                       "#include <sys/epoll.h>\n"
                       "int q = epoll_create1(0);\n"
                       "#endif\n"
                       "#ifndef __APPLE__\n"
                       "int e = eventfd(0, 0);\n"
                       "#elif __MACH__\n"
                       "int k = kqueue();\n"
                       "#else\n"
                       "int t = timerfd_create(0, 0);\n"
                       "#endif\n"),
              IsEmpty());
}

TEST(DarwinScan, NamesInCommentsAndStringsPass) {
  EXPECT_THAT(findings("// madvise(MADV_HUGEPAGE) where Linux has it\n"
                       "/* accept4 and\n   epoll_wait */\n"
                       "const char* a = \"pipe2 eventfd\";\n"
                       "const char* b = R\"x(SOCK_CLOEXEC \")\" )x\";\n"
                       "char c = 'e'; int n = 1'000;\n"
                       "int my_epoll_count = 0; int eventfd_count = 0;\n"),
              IsEmpty());
}

TEST(DarwinScan, UnguardedEpollHeaderFails) {
  DarwinScan scan = scan_for_darwin(
      "#include <vector>\n#include <sys/epoll.h>\n"
      "#include <linux/if.h>\n");
  ASSERT_EQ(scan.findings.size(), 2u);
  EXPECT_EQ(scan.findings[0].line, 2);
  EXPECT_EQ(darwin_message(scan.findings[0]),
            "<sys/epoll.h> is not on macOS; guard it (#if "
            "__has_include(<sys/epoll.h>) / #if defined(__linux__)) or mark "
            "the target WEFT_LINUX_ONLY");
  EXPECT_EQ(scan.findings[1].what, "<linux/if.h>");
}

TEST(DarwinScan, HasIncludeOfABannedHeaderIsFalse) {
  EXPECT_THAT(findings("#if __has_include(<sys/epoll.h>)\n"
                       "#include <sys/epoll.h>\n"
                       "#elif __has_include(<sys/event.h>)\n"
                       "#include <sys/event.h>\n"
                       "#endif\n"),
              IsEmpty());
}

TEST(DarwinScan, UnknownConditionsKeepBothBranches) {
  EXPECT_THAT(findings("#if defined(__x86_64__)\n"
                       "  a = sched_getcpu();\n"
                       "#else\n"
                       "  b = pthread_setaffinity_np(t, n, s);\n"
                       "#endif\n"
                       "#if WEFT_SOMETHING || defined(__linux__)\n"
                       "  c = memfd_create(\"x\", 0);\n"
                       "#endif\n"),
              ElementsAre("2: sched_getcpu", "4: pthread_setaffinity_np",
                          "7: memfd_create"));
}

TEST(DarwinScan, NestedBlocksFollowTheirParents) {
  EXPECT_THAT(findings("#if defined(__linux__)\n"
                       "#  ifdef FOO\n"
                       "int a = signalfd(0, 0, 0);\n"
                       "#  else\n"
                       "int b = TCP_USER_TIMEOUT;\n"
                       "#  endif\n"
                       "#elif defined(FOO)\n"
                       "int c = SO_BINDTODEVICE;\n"
                       "#endif\n"),
              ElementsAre("8: SO_BINDTODEVICE"));
}

TEST(DarwinScan, AShimDefiningTheNameMakesLaterUsesFine) {
  EXPECT_THAT(findings("#ifndef MAP_POPULATE\n"
                       "#define MAP_POPULATE 0\n"
                       "#endif\n"
                       "int flags = MAP_PRIVATE | MAP_POPULATE;\n"),
              IsEmpty());
}

TEST(DarwinScan, ContinuedLinesKeepTheirNumbers) {
  EXPECT_THAT(findings("#define FLAGS \\\n  (MAP_SHARED | \\\n   MAP_HUGETLB)\n"
                       "int x = 0;\nint y = SOCK_NONBLOCK;\n"),
              ElementsAre("1: MAP_HUGETLB", "5: SOCK_NONBLOCK"));
}

TEST(DarwinCheck, FollowsIncludesAndSkipsLinuxOnlyTargets) {
  FakeTree tree;
  tree.add_layers();
  // A private header is scanned when a source includes it; a public header
  // of a library even when nothing in the tree does.
  tree.write("sim/world.cc", "#include \"sim/internal/core.h\"\n");
  tree.write("sim/internal/core.h",
             "inline int f() { return MADV_HUGEPAGE; }\n");
  tree.write("collectives/group.h",
             "inline int g() { return eventfd(0, 0); }\n");
  tree.write("collectives/engine/unused.h", "int u = pipe2(0, 0);\n");
  // A test folder: only what its macOS-built sources include is scanned.
  tree.write("tests/verbs/user.cc", "#include \"tests/verbs/helper.h\"\n");
  tree.write("tests/verbs/helper.h", "#include <sys/epoll.h>\n");
  tree.write("tests/verbs/provider_test.cc",
             "#include \"provider_fixture.h\"\n");
  tree.write("tests/verbs/provider_fixture.h",
             "int x = accept4(0, 0, 0, 0);\n");
  tree.write("tests/verbs/incomplete.cc", "");
  tree.write("sim_verbs/provider.cc", "int y = accept4(0, 0, 0, 0);\n");
  tree.add_target(
      {"verbs_test", "EXECUTABLE", "tests/verbs", "", "", "", "user.cc"});
  tree.add_target({"incomplete_verbs", "SHARED_LIBRARY", "tests/verbs", "", "",
                   "", "incomplete.cc"});
  tree.add_target({"provider_test", "EXECUTABLE", "tests/verbs", "", "", "",
                   "provider_test.cc", /*linux_only=*/true});
  tree.add_target({"weft_sim_verbs", "SHARED_LIBRARY", "sim_verbs", "weft::sim",
                   "", "", "provider.cc", /*linux_only=*/true});
  Report report = tree.check_darwin();
  std::vector<std::string> errors;
  for (const Diagnostic& error : report.errors) {
    errors.push_back(error.file + ":" + std::to_string(error.line));
  }
  EXPECT_THAT(errors,
              ElementsAre("collectives/group.h:1", "sim/internal/core.h:1",
                          "tests/verbs/helper.h:1"));
  EXPECT_THAT(
      report.notes,
      ElementsAre("skipped provider_test (tests/verbs/): WEFT_LINUX_ONLY",
                  "skipped weft_sim_verbs (sim_verbs/): "
                  "WEFT_LINUX_ONLY"));
}

}  // namespace
}  // namespace weft::tools::include_check
