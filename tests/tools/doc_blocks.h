// The doc pages' fenced blocks, the markers that say how each is tested,
// and the comparison of what a block shows with what its commands print;
// shared by the doc tests (docs_test.cc, weft_sim_docs_test.cc).
//
// Docs are tested. Every fenced block (``` fence) of README.md and
// docs/*.md has one of these on the line right before its fence:
//
//   <!-- doc-test: run -->      "$ " lines are commands (a trailing
//       backslash continues one), each followed by what it prints, stdout
//       and stderr together. docs_test.cc runs them one after the other in
//       one shell, from a fresh directory, with this build's binaries in
//       place of build/default/... paths and of bare weft-sim, weft-bench
//       and weft-devices, and compares line by line, in order. A "..."
//       line stands for any number of printed lines (an excerpt of a
//       table: "...", a row, "...", a row, "..."). A command that exits
//       non-zero must be followed by `$ echo $?` showing its exit code.
//   <!-- doc-test: launch -->   a `weft-sim launch` sample: ranks are
//       processes whose lines interleave as the host schedules them, so
//       weft_sim_docs_test.cc runs it in a terminal and compares the lines
//       as a multiset.
//   <!-- doc-test: exempt: REASON -->   not run; REASON (not empty) says
//       why: a source excerpt, a setup or build command, a wall-clock
//       measurement, a Mac transcript, an emulator run, ...
//
// Only what truly varies is masked before comparing (masked() below):
// pids, the PSNs ibv_uc_pingpong draws, a CQ's address, wall-clock
// figures, launch's ports, secrets and directories, the checkout's path.
// Virtual time is exact, so every other figure must match to the digit. `<!--
// doc-test: launch-faults-table -->` before a table in docs/verbs-macos.md
// marks the rows weft_sim_docs_test.cc runs.
#ifndef WEFT_TESTS_TOOLS_DOC_BLOCKS_H_
#define WEFT_TESTS_TOOLS_DOC_BLOCKS_H_

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace weft::testing::docs {

enum class Kind { kNone, kRun, kLaunch, kExempt, kBad };

struct Marker {
  Kind kind = Kind::kNone;
  std::string reason;  // kExempt's reason; kBad's complaint
};

// The marker `line` holds, if any.
inline Marker marker_of(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "<!-- doc-test:")) return {};
  if (!absl::ConsumeSuffix(&line, "-->")) {
    return {Kind::kBad, "a doc-test marker ends with -->"};
  }
  line = absl::StripAsciiWhitespace(line);
  if (line == "run") return {Kind::kRun, ""};
  if (line == "launch") return {Kind::kLaunch, ""};
  if (absl::ConsumePrefix(&line, "exempt:")) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) return {Kind::kBad, "exempt needs a reason"};
    return {Kind::kExempt, std::string(line)};
  }
  return {Kind::kBad, absl::StrCat("unknown doc-test marker '", line,
                                   "': run, launch or exempt: REASON")};
}

inline bool is_fence(absl::string_view line) {
  return absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "```");
}

// One fenced block: its marker (from the line before the fence) and body.
struct Block {
  std::string page;
  size_t fence_line = 0;  // 1-based
  Marker marker;
  std::vector<std::string> body;
  std::string where() const { return absl::StrCat(page, ":", fence_line); }
};

inline std::string read_source_file(const std::string& source_dir,
                                    const std::string& page) {
  std::ifstream file(source_dir + "/" + page);
  return std::string((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
}

inline std::vector<Block> blocks_of(const std::string& page,
                                    const std::string& text) {
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::vector<Block> blocks;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!is_fence(lines[i])) continue;
    Block b;
    b.page = page;
    b.fence_line = i + 1;
    if (i > 0) b.marker = marker_of(lines[i - 1]);
    size_t at = i + 1;
    for (; at < lines.size() && !is_fence(lines[at]); ++at) {
      b.body.push_back(lines[at]);
    }
    i = at;  // the closing fence
    blocks.push_back(std::move(b));
  }
  return blocks;
}

// README.md and every docs/*.md under `source_dir`, as paths from it.
inline std::vector<std::string> pages_of(const std::string& source_dir) {
  std::vector<std::string> out = {"README.md"};
  for (const auto& entry :
       std::filesystem::directory_iterator(source_dir + "/docs")) {
    if (entry.path().extension() == ".md") {
      out.push_back("docs/" + entry.path().filename().string());
    }
  }
  std::sort(out.begin() + 1, out.end());
  return out;
}

// The pages with at least one block of `kind`.
inline std::vector<std::string> pages_with(const std::string& source_dir,
                                           Kind kind) {
  std::vector<std::string> out;
  for (const std::string& page : pages_of(source_dir)) {
    for (const Block& b : blocks_of(page, read_source_file(source_dir, page))) {
      if (b.marker.kind == kind) {
        out.push_back(page);
        break;
      }
    }
  }
  return out;
}

// A test name for `page`: "docs/faults.md" -> "docs_faults_md".
inline std::string test_name_of(std::string page) {
  for (char& c : page) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return page;
}

// A "$ " command (continuations joined) and the lines shown after it.
struct Step {
  std::string command;
  std::vector<std::string> shown;
  std::vector<size_t> shown_at;  // the index in the block's body of each
};

inline std::vector<Step> steps_of(const std::vector<std::string>& body) {
  std::vector<Step> steps;
  for (size_t at = 0; at < body.size(); ++at) {
    const std::string& line = body[at];
    if (!absl::StartsWith(line, "$ ")) {
      if (steps.empty()) steps.emplace_back();  // output before any command
      steps.back().shown.push_back(line);
      steps.back().shown_at.push_back(at);
      continue;
    }
    Step s;
    s.command = line.substr(2);
    while (absl::EndsWith(s.command, "\\") && at + 1 < body.size()) {
      s.command.pop_back();
      s.command += std::string(absl::StripLeadingAsciiWhitespace(body[++at]));
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

// What differs from run to run in an otherwise deterministic line, as a
// placeholder; trailing blanks dropped.
inline std::string masked(absl::string_view line) {
  static const auto* const kVarying =
      new std::vector<std::pair<std::regex, std::string>>{
          {std::regex("\\(pid [0-9]+"), "(pid P"},
          {std::regex("PSN 0x[0-9a-f]+"), "PSN 0xP"},
          {std::regex("\\(cq 0x[0-9a-f]+\\)"), "(cq 0xA)"},
          {std::regex("[0-9.]+ seconds = [0-9.]+ "), "T seconds = R "},
          {std::regex("^wall time: [0-9.]+ s, [0-9.]+ seeds/s$"),
           "wall time: T s, R seeds/s"},
          {std::regex("^seed cost: median [0-9.]+ ms, p99 [0-9.]+ ms, max "
                      "[0-9.]+ ms \\(seed [0-9]+\\)$"),
           "seed cost: median T ms, p99 T ms, max T ms (seed S)"},
          // What `weft-sim launch` makes per run: a coordinator port, the
          // ports of a TCP hostfile, a secret and a directory; and where
          // the reader's checkout is.
          {std::regex("(COORDINATOR=127\\.0\\.0\\.1:)[0-9]+"), "$1PORT"},
          {std::regex("(\"127\\.0\\.0\\.1:)[0-9]+\""), "$1PORT\""},
          {std::regex("(WEFT_SECRET=)[0-9a-f]{64}"), "$1SECRET"},
          {std::regex("/tmp/weft-sim-[A-Za-z0-9]+/"), "/tmp/weft-sim-D/"},
          {std::regex("(^|[ =':])/[^ =':]*/build/default/"),
           "$1build/default/"}};
  std::string out(absl::StripTrailingAsciiWhitespace(line));
  for (const auto& [re, with] : *kVarying) {
    out = std::regex_replace(out, re, with);
  }
  return out;
}

// Where a block's lines and a run's first part ways.
struct Difference {
  bool same = true;
  size_t shown_index = 0;  // into `shown`; shown.size(): past the end
  std::string why;         // names the first differing lines
};

// Where lines [i, i + len) of `shown` first stand in `printed`, starting
// at one of first..last; if nowhere, where most of them matched.
struct Match {
  bool found = false;
  size_t at = 0;
  size_t len = 0;  // lines matched there
};

inline Match find_lines(const std::vector<std::string>& shown, size_t i,
                        size_t len, const std::vector<std::string>& printed,
                        size_t first, size_t last) {
  Match best{false, first, 0};
  for (size_t at = first; at <= last; ++at) {
    size_t m = 0;
    while (m < len && at + m < printed.size() &&
           shown[i + m] == printed[at + m]) {
      ++m;
    }
    if (m == len) return {true, at, len};
    if (m > best.len) best = {false, at, m};
  }
  return best;
}

// The printed line from `from` on most like `line` (the longest common
// prefix), to name in a message; `otherwise` if none shares a character.
inline size_t most_like(const std::string& line,
                        const std::vector<std::string>& printed, size_t from,
                        size_t otherwise) {
  size_t best_common = 0;
  for (size_t at = from; at < printed.size(); ++at) {
    const size_t common = static_cast<size_t>(
        std::mismatch(line.begin(), line.end(), printed[at].begin(),
                      printed[at].end())
            .first -
        line.begin());
    if (common > best_common) best_common = common, otherwise = at;
  }
  return otherwise;
}

// Whether `printed` is what `shown` shows, in order: masked lines equal,
// a "..." line in `shown` standing for any number of printed lines.
// Trailing blank lines of either are ignored.
inline Difference compare_in_order(std::vector<std::string> shown,
                                   std::vector<std::string> printed) {
  for (auto* v : {&shown, &printed}) {
    for (std::string& l : *v) l = masked(l);
    while (!v->empty() && v->back().empty()) v->pop_back();
  }
  const auto is_gap = [](const std::string& l) {
    return absl::StripAsciiWhitespace(l) == "...";
  };
  size_t next = 0;  // the first printed line not yet matched
  size_t i = 0;
  while (i < shown.size()) {
    const bool gap_before = is_gap(shown[i]);
    while (i < shown.size() && is_gap(shown[i])) ++i;
    size_t end = i;  // [i, end): the lines up to the next gap
    while (end < shown.size() && !is_gap(shown[end])) ++end;
    if (i == end) return {};  // ends with a gap
    const size_t len = end - i;
    const bool to_the_end = end == shown.size();
    // Where these lines may start: right at `next` after a line that is
    // not a gap; at the end when nothing follows them; else anywhere.
    size_t first = next;
    size_t last = next;
    if (gap_before && to_the_end) {
      first = last =
          std::max(next, printed.size() - std::min(len, printed.size()));
    } else if (gap_before) {
      last = printed.size();
    }
    Match m = find_lines(shown, i, len, printed, first, last);
    if (!m.found && m.len == 0 && gap_before) {
      m.at = most_like(shown[i], printed, next, m.at);
    }
    const bool found = m.found;
    const size_t best_at = m.at;
    const size_t best_len = m.len;
    if (!found) {
      const size_t s = i + best_len;
      const size_t p = best_at + best_len;
      return {false, s,
              absl::StrCat("shown `", shown[s], "` but printed ",
                           p < printed.size()
                               ? absl::StrCat("`", printed[p],
                                              "` (printed line ", p + 1, ")")
                               : std::string("nothing more"))};
    }
    next = best_at + len;
    i = end;
    if (to_the_end && next != printed.size()) {
      return {false, shown.size(),
              absl::StrCat("printed more than shown, from printed line ",
                           next + 1, ": `", printed[next], "`")};
    }
  }
  if (shown.empty() && !printed.empty()) {
    return {false, 0,
            absl::StrCat("shown nothing but printed `", printed[0], "`")};
  }
  return {};
}

}  // namespace weft::testing::docs

#endif  // WEFT_TESTS_TOOLS_DOC_BLOCKS_H_
