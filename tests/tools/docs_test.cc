// The pages say what the tools print: every fenced block of README.md and
// docs/*.md carries a doc-test marker, and every `run` block's commands
// print what the block shows (the scheme is in doc_blocks.h). Their prose
// names repository paths that exist, quotes beside a run block only
// figures the block shows, and README names every example.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "doc_blocks.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing::docs {
namespace {

std::vector<std::string> pages() { return pages_of(WEFT_SOURCE_DIR); }

std::vector<Block> page_blocks(const std::string& page) {
  return blocks_of(page, read_source_file(WEFT_SOURCE_DIR, page));
}

TEST(DocsMarkers, EveryFencedBlockSaysHowItIsTested) {
  size_t blocks = 0;
  for (const std::string& page : pages()) {
    for (const Block& b : page_blocks(page)) {
      ++blocks;
      switch (b.marker.kind) {
        case Kind::kNone:
          ADD_FAILURE() << b.where()
                        << ": a fenced block needs a marker on the line "
                           "before its fence: <!-- doc-test: run -->, "
                           "<!-- doc-test: launch --> or <!-- doc-test: "
                           "exempt: REASON --> (tests/tools/doc_blocks.h)";
          break;
        case Kind::kBad:
          ADD_FAILURE() << b.where() << ": " << b.marker.reason;
          break;
        case Kind::kRun:
        case Kind::kLaunch: {
          const std::vector<Step> steps = steps_of(b.body);
          EXPECT_TRUE(!steps.empty() && !steps[0].command.empty())
              << b.where() << ": a run or launch block starts with a "
              << "\"$ \" command";
          break;
        }
        case Kind::kExempt:
          break;
      }
    }
  }
  EXPECT_GT(blocks, 0u) << "no fenced blocks under " << WEFT_SOURCE_DIR;
}

// Every repository path the pages' prose names exists. What counts as one
// and what is left out (fenced blocks; globs and placeholders: `*`, `<`,
// `{`, `$`, `...`, a component in capitals such as NAME; build and install
// trees: build/..., include/weft/..., lib/..., $PREFIX; another project's
// file behind a link to it) is repository_paths_of()'s rule, doc_blocks.h.
TEST(DocsPaths, EveryRepositoryPathAPageNamesExists) {
  const std::set<std::string> roots = repository_roots(WEFT_SOURCE_DIR);
  ASSERT_TRUE(roots.count("docs") > 0 && roots.count("README.md") > 0)
      << WEFT_SOURCE_DIR << " is not weft's checkout";
  size_t named = 0;
  for (const std::string& page : pages()) {
    const std::string text = read_source_file(WEFT_SOURCE_DIR, page);
    for (const NamedPath& p : repository_paths_of(text, roots)) {
      ++named;
      EXPECT_TRUE(
          std::filesystem::exists(std::string(WEFT_SOURCE_DIR) + "/" + p.path))
          << page << ":" << p.line << ": `" << p.path
          << "` is not in the repository: name it where it is now, from the "
             "repository's root; a placeholder is <name> or NAME, another "
             "project's file a link to it (tests/tools/doc_blocks.h)";
    }
  }
  // The rules still find the pages' paths (they name hundreds).
  EXPECT_GT(named, 100u);
}

TEST(DocsPaths, ReadmeNamesEveryExample) {
  const std::string readme = read_source_file(WEFT_SOURCE_DIR, "README.md");
  size_t examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(WEFT_SOURCE_DIR) + "/examples")) {
    const std::string name = entry.path().filename().string();
    if (name == "CMakeLists.txt") continue;
    ++examples;
    EXPECT_TRUE(absl::StrContains(readme, absl::StrCat("`", name, "`")))
        << "README.md, \"Examples\", does not name examples/" << name
        << ": add it to the list, saying what it shows";
  }
  EXPECT_GT(examples, 0u);
}

// A figure the prose quotes right before or after a run block is one the
// block shows, digit for digit: the block is run, the prose is not, so a
// changed figure is caught only here. The rule (two decimals and a unit of
// time or bandwidth; figures of other precision are not checked) is
// figures_beside_run_blocks()'s, doc_blocks.h.
TEST(DocsFigures, AFigureQuotedBesideARunBlockIsOneTheBlockShows) {
  size_t quoted = 0;
  for (const std::string& page : pages()) {
    const std::string text = read_source_file(WEFT_SOURCE_DIR, page);
    const std::vector<Block> blocks = blocks_of(page, text);
    for (const QuotedFigure& f : figures_beside_run_blocks(text, blocks)) {
      ++quoted;
      std::vector<std::string> where;
      for (const Block* b : f.beside) where.push_back(b->where());
      EXPECT_TRUE(std::any_of(
          f.beside.begin(), f.beside.end(),
          [&f](const Block* b) { return shows_number(b->body, f.number); }))
          << page << ":" << f.line << ": the prose quotes " << f.figure
          << " beside the run block at " << absl::StrJoin(where, " and ")
          << ", which does not show " << f.number
          << ": quote what the block shows (it is run; the prose is not)";
    }
  }
  // benchmarking.md quotes the default run's time and bandwidth.
  EXPECT_GT(quoted, 0u);
}

// The page's command with this build's binaries and files.
std::string for_this_build(const std::string& command) {
  const std::string build = WEFT_BUILD_DIR;
  std::string out = absl::StrReplaceAll(
      command,
      {{"$PWD/build/default", build},
       {"build/default/", build + "/"},
       {"tests/tools/", std::string(WEFT_SOURCE_DIR) + "/tests/tools/"}});
  return std::regex_replace(
      out, std::regex("(^|[ ;|&(])(weft-sim|weft-bench|weft-devices)(?= |$)"),
      "$1" + build + "/bin/$2");
}

struct Printed {
  std::string text;
  int code = -1;
};

constexpr char kEndOfCommand[] = "\036weft-doc-test rc=";

// Runs a block's commands one after the other in one shell (so `export`
// and `echo $?` work as in a terminal), from a fresh directory, stdout and
// stderr together, under a deadline; what each printed and its exit code.
// The deadline only stops a hang: README's study takes about 45 s on a
// quiet 2-core machine and past two minutes when other builds share it.
constexpr int kCommandsDeadlineS = 600;

std::vector<Printed> run_commands(const std::vector<std::string>& commands) {
  std::string script = "exec 2>&1\n";
  for (const std::string& c : commands) {
    absl::StrAppend(&script, for_this_build(c), "\nweft_rc=$?; printf '",
                    kEndOfCommand, "%d\\n' $weft_rc; (exit $weft_rc)\n");
  }
  const ScriptRun run =
      run_script(script, absl::StrCat("timeout ", kCommandsDeadlineS,
                                      " bash commands.sh </dev/null 2>&1"));
  EXPECT_NE(run.code, 124) << "the commands ran past their deadline: "
                           << absl::StrJoin(commands, "; ");
  const std::string& dir = run.dir;
  std::string out = run.out;
  // Paths of this build and of the scratch directory, as the page has them.
  out = absl::StrReplaceAll(
      out, {{std::string(WEFT_BUILD_DIR), "build/default"}, {dir + "/", ""}});
  std::vector<Printed> each;
  size_t from = 0;
  for (size_t at; (at = out.find(kEndOfCommand, from)) != std::string::npos;) {
    Printed p;
    p.text = out.substr(from, at - from);
    const size_t code_at = at + sizeof(kEndOfCommand) - 1;
    p.code = std::atoi(out.c_str() + code_at);
    from = out.find('\n', code_at);
    from = from == std::string::npos ? out.size() : from + 1;
    each.push_back(std::move(p));
  }
  return each;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out = absl::StrSplit(text, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// Checks one run block; `cache` holds what earlier blocks' command lists
// printed, so a command two blocks show runs once.
void check_run_block(
    const Block& b,
    std::map<std::vector<std::string>, std::vector<Printed>>* cache) {
  const std::vector<Step> steps = steps_of(b.body);
  std::vector<std::string> commands;
  for (const Step& s : steps) commands.push_back(s.command);
  auto it = cache->find(commands);
  if (it == cache->end()) {
    it = cache->emplace(commands, run_commands(commands)).first;
  }
  const std::vector<Printed>& printed = it->second;
  ASSERT_EQ(printed.size(), steps.size())
      << b.where() << ": the shell stopped early";
  for (size_t k = 0; k < steps.size(); ++k) {
    const Step& s = steps[k];
    const Difference d = compare_in_order(s.shown, lines(printed[k].text));
    const size_t body_at = d.shown_index < s.shown_at.size()
                               ? s.shown_at[d.shown_index]
                               : (s.shown_at.empty() ? 0 : s.shown_at.back());
    EXPECT_TRUE(d.same) << b.page << ":" << b.fence_line + 1 + body_at << ": `"
                        << s.command << "`: " << d.why << "\nit printed:\n"
                        << printed[k].text;
    const bool code_shown =
        k + 1 < steps.size() && steps[k + 1].command == "echo $?";
    EXPECT_TRUE(printed[k].code == 0 || code_shown)
        << b.where() << ": `" << s.command << "` exited " << printed[k].code
        << " (a block shows a failing command's exit code with `$ echo $?` "
           "after it):\n"
        << printed[k].text;
  }
}

class DocsRunBlocks : public ::testing::TestWithParam<std::string> {};

TEST_P(DocsRunBlocks, PrintWhatThePageShows) {
  std::map<std::vector<std::string>, std::vector<Printed>> cache;
  for (const Block& b : page_blocks(GetParam())) {
    if (b.marker.kind != Kind::kRun) continue;
    SCOPED_TRACE(b.where());
    check_run_block(b, &cache);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Pages, DocsRunBlocks,
    ::testing::ValuesIn(pages_with(WEFT_SOURCE_DIR, Kind::kRun)),
    [](const auto& info) { return test_name_of(info.param); });

}  // namespace
}  // namespace weft::testing::docs
