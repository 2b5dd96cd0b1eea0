// What the pages show `weft-sim launch` printing is what it prints.
//
// docs/simulation-server.md ("Running your own verbs program on simulated
// Macs", "weft-sim launch", "Deadlocks", "Programs with threads", whose
// samples run tests/tools/threaded_ring.cc) and docs/jaccl.md (a JACCL
// program, one of the installed examples, on the server and over TCP)
// mark each such sample
// `<!-- doc-test: launch -->` (the scheme is in doc_blocks.h): "$ " lines
// are commands, the lines after them what a terminal showed. Each sample
// runs here as the page gives it, from a fresh directory, with this
// build's binaries in place of the build/default paths and a free port in
// place of 18515, in a terminal (script(1)), as a reader runs it (a
// terminal's line buffering orders the lines as the page shows them). The
// ranks' lines interleave as the host schedules them, so lines are
// compared as a multiset, masked as doc_blocks.h's masked() says;
// everything else, the virtual time and trace hash above all, must be
// exactly as shown. A "..." line stands for lines left out.
//
// simulation-server.md's table after `<!-- doc-test: launch-faults-table -->`
// gives, for one-line fault plans, how the page's pingpong run ends: each
// row runs that command with --faults naming a file holding the row's plan
// line.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "doc_blocks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

constexpr char kPingpong[] = "/usr/bin/ibv_uc_pingpong";
constexpr char kFaultTableMarker[] = "<!-- doc-test: launch-faults-table -->";

std::vector<std::string> page_lines(const std::string& page) {
  return absl::StrSplit(docs::read_source_file(WEFT_SOURCE_DIR, page), '\n');
}

// One sample: where it is, its commands (continuations joined) and the
// lines shown after them.
struct Sample {
  std::string where;  // page:line of the fence
  std::vector<std::string> commands;
  std::vector<std::string> shown;
  bool wall_clock = false;  // `launch: wall clock`: timings masked too
};

std::vector<Sample> samples_of(const std::string& page) {
  std::vector<Sample> samples;
  for (const docs::Block& b :
       docs::blocks_of(page, docs::read_source_file(WEFT_SOURCE_DIR, page))) {
    if (b.marker.kind != docs::Kind::kLaunch) continue;
    Sample s;
    s.where = b.where();
    s.wall_clock = b.marker.wall_clock;
    for (const docs::Step& step : docs::steps_of(b.body)) {
      EXPECT_TRUE(s.shown.empty())
          << s.where << ": commands come before the output";
      if (!step.command.empty()) s.commands.push_back(step.command);
      s.shown.insert(s.shown.end(), step.shown.begin(), step.shown.end());
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

// The page's command with this build's binaries and `port`.
std::string for_this_build(const std::string& command, uint16_t port) {
  const std::vector<std::pair<std::string, std::string>> binaries = {
      {"build/default/bin/weft-sim", WEFT_SIM_PATH},
      {"build/default/bin/weft-bench", WEFT_BENCH_PATH},
      {"build/default/tests/install/scratch/examples/", WEFT_EXAMPLES_DIR "/"},
      {"tests/tools/wait_for_listener.sh", WEFT_WAIT_FOR_LISTENER},
#ifdef WEFT_JACCL_ALL_SUM
      {"build/default/bin/jaccl_all_sum", WEFT_JACCL_ALL_SUM},
#endif
#ifdef WEFT_THREADED_RING
      {"build/default/bin/weft_test_threaded_ring", WEFT_THREADED_RING},
#endif
  };
  std::vector<std::pair<std::string, std::string>> removed;
  for (const auto& [shown, path] : binaries) removed.emplace_back(shown, "");
  EXPECT_EQ(absl::StrReplaceAll(command, removed).find("build/"),
            std::string::npos)
      << "a binary this test does not know: " << command;
  std::string out = absl::StrReplaceAll(command, binaries);
  out = std::regex_replace(out, std::regex("(^| )ibv_uc_pingpong(?= |$)"),
                           std::string("$1") + kPingpong);
  return std::regex_replace(out, std::regex("\\b18515\\b"),
                            std::to_string(port));
}

struct TerminalRun {
  int code = -1;
  std::vector<std::string> lines;
};

// Runs `commands` one after the other (stopping at the first that fails)
// from a new directory, in a terminal, under a deadline.
TerminalRun run_in_terminal(const std::vector<std::string>& commands) {
  const ScriptRun run = run_script(
      "set -e\n" + absl::StrJoin(commands, "\n") + "\n",
      "timeout 300 script -qec 'bash commands.sh' /dev/null </dev/null 2>&1");
  TerminalRun r;
  r.code = run.code;
  std::string out = run.out;
  out.erase(std::remove(out.begin(), out.end(), '\r'), out.end());
  r.lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  return r;
}

// How launch's summary says the run ended, and whether every rank exited
// 0: the exit code launch gives (docs/simulation-server.md). A launch over TCP
// (`--fabric=tcp`, docs/tcp.md) has no simulated world and no summary: it
// exits 0 when every rank did.
int expected_launch_code(const std::vector<std::string>& lines, bool tcp) {
  bool finished = tcp;
  bool all_zero = true;
  for (const std::string& l : lines) {
    if (l.rfind("weft-sim: finished at virtual time", 0) == 0) finished = true;
    if (std::regex_search(l, std::regex("^rank [0-9]+ \\(pid [0-9P]+\\): ")) &&
        !absl::EndsWith(l, "): exited 0")) {
      all_zero = false;
    }
  }
  return finished && all_zero ? 0 : 1;
}

// Whether the run printed what the page shows; what differs, if not.
std::string compare(const std::vector<std::string>& shown,
                    const std::vector<std::string>& printed, bool wall_clock) {
  const auto mask = [wall_clock](const std::string& l) {
    return wall_clock ? docs::masked_wall_clock(docs::masked(l))
                      : docs::masked(l);
  };
  std::multiset<std::string> want;
  std::multiset<std::string> got;
  bool partial = false;
  for (const std::string& l : shown) {
    if (absl::StripAsciiWhitespace(l) == "...") {
      partial = true;
    } else if (!l.empty()) {
      want.insert(mask(l));
    }
  }
  for (const std::string& l : printed) {
    // The server names a rank that holds virtual time for --hold_report_s
    // of wall time: on a loaded host that can happen to any sample, and it
    // changes nothing else.
    if (l.find(" has held virtual time at ") != std::string::npos) continue;
    got.insert(mask(l));
  }
  std::vector<std::string> missing;
  std::vector<std::string> extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                      std::back_inserter(extra));
  std::string why;
  if (!missing.empty()) {
    why += "shown but not printed:\n  " + absl::StrJoin(missing, "\n  ") + "\n";
  }
  if (!partial && !extra.empty()) {
    why += "printed but not shown:\n  " + absl::StrJoin(extra, "\n  ") + "\n";
  }
  return why;
}

class DocsSamples : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kPingpong))
        << kPingpong << " is missing: install ibverbs-utils (scripts/setup.sh)";
  }
};

TEST_P(DocsSamples, PrintWhatThePageShows) {
  const std::vector<Sample> samples = samples_of(GetParam());
  ASSERT_FALSE(samples.empty()) << GetParam() << " has no launch sample";
  for (const Sample& s : samples) {
    SCOPED_TRACE(s.where);
    ASSERT_FALSE(s.commands.empty());
    std::vector<std::string> commands;
    const uint16_t port = free_port();
    bool launches = false;
    bool tcp = false;
    for (const std::string& c : s.commands) {
      commands.push_back(for_this_build(c, port));
      launches = launches || c.find("weft-sim launch") != std::string::npos;
      tcp = tcp || c.find("launch --fabric=tcp") != std::string::npos;
    }
    const TerminalRun r = run_in_terminal(commands);
    EXPECT_EQ(compare(s.shown, r.lines, s.wall_clock), "")
        << "the page shows:\n"
        << absl::StrJoin(s.shown, "\n") << "\nthe commands printed:\n"
        << absl::StrJoin(r.lines, "\n");
    if (launches) {
      // The summary line is there, and the exit code is the one it means.
      if (!tcp) {
        EXPECT_THAT(s.shown,
                    ::testing::Contains(::testing::StartsWith("weft-sim: ")));
      }
      EXPECT_EQ(r.code, expected_launch_code(r.lines, tcp))
          << absl::StrJoin(r.lines, "\n");
    } else {
      EXPECT_EQ(r.code, 0) << absl::StrJoin(r.lines, "\n");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Pages, DocsSamples,
    ::testing::ValuesIn(docs::pages_with(WEFT_SOURCE_DIR, docs::Kind::kLaunch)),
    [](const auto& info) { return docs::test_name_of(info.param); });

// A row of the fault table: | `plan line` | outcome | virtual time | `hash`
// | rank 0's and rank 1's exit codes | what pingpong does |.
struct FaultRow {
  std::string plan;
  std::string summary;  // launch's line
  std::vector<std::string> exits;
};

std::string cell(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&text, "`");
  absl::ConsumeSuffix(&text, "`");
  return std::string(text);
}

TEST(DocsFaultTable, EachPlanEndsThePingpongAsThePageSays) {
  ASSERT_TRUE(std::filesystem::exists(kPingpong));
  const std::string page = "docs/simulation-server.md";
  const std::vector<std::string> lines = page_lines(page);
  // The command the rows change: the page's first launch sample without a
  // fault plan.
  std::string launch;
  for (const Sample& s : samples_of(page)) {
    for (const std::string& c : s.commands) {
      if (launch.empty() && c.find("weft-sim launch") != std::string::npos &&
          c.find("--faults") == std::string::npos &&
          c.find("--loss") == std::string::npos) {
        launch = c;
      }
    }
  }
  ASSERT_FALSE(launch.empty()) << page << " shows no pingpong launch";
  std::vector<FaultRow> rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (absl::StripAsciiWhitespace(lines[i]) != kFaultTableMarker) continue;
    for (size_t at = i + 3; at < lines.size() && lines[at].rfind("|", 0) == 0;
         ++at) {
      const std::vector<std::string> cells = absl::StrSplit(lines[at], '|');
      ASSERT_EQ(cells.size(), 8u) << lines[at];
      FaultRow row;
      row.plan = cell(cells[1]);
      row.summary = absl::StrCat(
          "weft-sim: ", cell(cells[2]), " at virtual time ", cell(cells[3]),
          ", 1 faults injected, trace hash ", cell(cells[4]));
      row.exits = absl::StrSplit(cell(cells[5]), ", ");
      rows.push_back(row);
    }
  }
  ASSERT_GE(rows.size(), 7u)
      << page << ": no fault table after " << kFaultTableMarker;
  for (const FaultRow& row : rows) {
    SCOPED_TRACE(row.plan);
    const std::string command =
        std::regex_replace(launch, std::regex("weft-sim launch "),
                           "weft-sim launch --faults=plan.txt ");
    const TerminalRun r =
        run_in_terminal({absl::StrCat("echo '", row.plan, "' > plan.txt"),
                         for_this_build(command, free_port())});
    const std::string all = absl::StrJoin(r.lines, "\n");
    EXPECT_THAT(r.lines, ::testing::Contains(row.summary)) << all;
    ASSERT_EQ(row.exits.size(), 2u);
    for (size_t rank = 0; rank < row.exits.size(); ++rank) {
      EXPECT_THAT(
          r.lines,
          ::testing::Contains(::testing::MatchesRegex(absl::StrCat(
              "rank ", rank, " \\(pid [0-9]+\\): exited ", row.exits[rank]))))
          << all;
    }
    EXPECT_EQ(r.code, expected_launch_code(r.lines, false)) << all;
  }
}

}  // namespace
}  // namespace weft::testing
