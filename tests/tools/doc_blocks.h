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
//   <!-- doc-test: launch: wall clock -->   the same, for a program that
//       measures wall time (weft-bench over TCP): its timings are masked
//       too (masked_wall_clock() below), every other column must match.
//   <!-- doc-test: exempt: REASON -->   not run; REASON (not empty) says
//       why: a source excerpt, a setup or build command, a wall-clock
//       measurement, a Mac transcript, an emulator run, ...
//
// Only what truly varies is masked before comparing (masked() below):
// pids, the PSNs ibv_uc_pingpong draws, a CQ's address, wall-clock
// figures, launch's ports, secrets and directories, the checkout's path.
// Virtual time is exact, so every other figure must match to the digit. `<!--
// doc-test: launch-faults-table -->` before a table in
// docs/simulation-server.md marks the rows weft_sim_docs_test.cc runs.
#ifndef WEFT_TESTS_TOOLS_DOC_BLOCKS_H_
#define WEFT_TESTS_TOOLS_DOC_BLOCKS_H_

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
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
  std::string reason;       // kExempt's reason; kBad's complaint
  bool wall_clock = false;  // kLaunch: its timings are wall-clock figures
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
  if (line == "launch: wall clock") return {Kind::kLaunch, "", true};
  if (absl::ConsumePrefix(&line, "exempt:")) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) return {Kind::kBad, "exempt needs a reason"};
    return {Kind::kExempt, std::string(line)};
  }
  return {Kind::kBad, absl::StrCat("unknown doc-test marker '", line,
                                   "': run, launch, launch: wall clock or "
                                   "exempt: REASON")};
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

// What a `launch: wall clock` block masks besides masked(): in a row of
// weft-bench's table the time, algbw and busbw columns (out of place and in
// place), and the average bus bandwidth under it. Sizes, counts, types,
// reductions, roots and #wrong still count.
inline std::string masked_wall_clock(const std::string& line) {
  static const auto* const kRow = new std::regex(
      "^( +[0-9]+ +[0-9]+ +[a-z0-9_]+ +[a-z_]+ +-?[0-9]+)"
      " +[0-9.]+ +[0-9.]+ +[0-9.]+( +[0-9]+)"
      " +[0-9.]+ +[0-9.]+ +[0-9.]+( +[0-9]+)$");
  static const auto* const kAverage =
      new std::regex("^(# Avg bus bandwidth +: )[0-9.]+$");
  std::string out = std::regex_replace(line, *kRow, "$1 T T T$2 T T T$3");
  return std::regex_replace(out, *kAverage, "$1T");
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

// The prose (every line outside fenced blocks) is not run, so two of its
// claims are checked apart from the blocks: the repository paths it names
// exist, and a figure it quotes beside a run block is one the block shows.

// The top-level entries of the checkout at `source_dir` whose paths are
// repository paths: every file and folder but `.git`, build trees
// (`build`, `build-*`) and an installation's roots (`bin`, `include`,
// `lib`, `share`), which pages name inside a build or an install.
inline std::set<std::string> repository_roots(const std::string& source_dir) {
  static const std::set<std::string> kNotRepository = {".git", "bin", "include",
                                                       "lib", "share"};
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir)) {
    const std::string name = entry.path().filename().string();
    if (kNotRepository.count(name) > 0 || absl::StartsWith(name, "build")) {
      continue;
    }
    out.insert(name);
  }
  return out;
}

// The line indices (0-based) of `lines` inside fenced blocks, fences
// included (the same fences blocks_of() finds).
inline std::vector<bool> fenced_lines(const std::vector<std::string>& lines) {
  std::vector<bool> fenced(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!is_fence(lines[i])) continue;
    fenced[i] = true;
    for (++i; i < lines.size() && !is_fence(lines[i]); ++i) fenced[i] = true;
    if (i < lines.size()) fenced[i] = true;
  }
  return fenced;
}

struct NamedPath {
  size_t line = 0;  // 1-based
  std::string path;
};

// Whether `word` stands for many paths or for one the reader picks: a glob
// or placeholder character (`*`, `<`, `>`, `{`, `}`, `$`, `~`), `...`, or a
// component past the first in capitals (`NAME`, `OUT_DIR`, `FILE.json`).
inline bool is_pattern(absl::string_view word) {
  if (word.find_first_of("*<>{}$~") != absl::string_view::npos ||
      absl::StrContains(word, "...")) {
    return true;
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(word, '/');
  for (size_t k = 1; k < parts.size(); ++k) {
    const absl::string_view stem = parts[k].substr(0, parts[k].find('.'));
    const bool capitals =
        std::any_of(stem.begin(), stem.end(),
                    [](unsigned char c) { return absl::ascii_isupper(c); }) &&
        std::none_of(stem.begin(), stem.end(),
                     [](unsigned char c) { return absl::ascii_islower(c); });
    if (capitals) return true;
  }
  return false;
}

// `word` without what follows a path in prose: trailing punctuation, an
// `#anchor`, a `:line` or `:first-last`; and without a leading `./`.
inline std::string path_of_word(absl::string_view word) {
  static const std::regex kLine(":[0-9]+(-[0-9]+)?$");
  absl::ConsumePrefix(&word, "./");
  word = absl::StripTrailingAsciiWhitespace(word);
  const auto trailing = [](absl::string_view w) {
    return !w.empty() &&
           absl::string_view(".:!?").find(w.back()) != absl::string_view::npos;
  };
  while (trailing(word)) word.remove_suffix(1);
  word = word.substr(0, word.find('#'));
  std::string out = std::regex_replace(std::string(word), kLine, "");
  while (trailing(out)) out.pop_back();
  return out;
}

// The repository paths the prose of `text` names, in order: every word
// (split at blanks and at `` ` ' " ( ) [ ] , ; | = ``) with a `/` whose first
// component is one of `roots` (repository_roots()). A bare top-level name
// (`README.md`) is one of `roots` by construction and is not listed. Left
// out: fenced blocks (commands run in build trees, installed include paths);
// patterns (is_pattern()); the text of a Markdown link to a URL, which names
// a file of another project ("MLX's [`examples/cpp/distributed.cpp`](https:
// ...)"); and paths whose first component is not a repository root, so
// `build/default/...`, `include/weft/...`, `lib/...`, `$PREFIX/...`,
// `weft/collectives/group.h` (as installed) and `mlx/distributed/...`.
inline std::vector<NamedPath> repository_paths_of(
    const std::string& text, const std::set<std::string>& roots) {
  static const std::regex kForeignLink("\\[[^\\]]*\\]\\([a-z]+://[^)]*\\)");
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  const std::vector<bool> fenced = fenced_lines(lines);
  std::vector<NamedPath> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (fenced[i]) continue;
    const std::string prose = std::regex_replace(lines[i], kForeignLink, " ");
    for (absl::string_view word : absl::StrSplit(
             prose, absl::ByAnyChar(" \t`'\"()[],;|="), absl::SkipEmpty())) {
      if (is_pattern(word)) continue;
      const std::string path = path_of_word(word);
      const size_t slash = path.find('/');
      if (slash == std::string::npos || slash == 0) continue;
      if (roots.count(path.substr(0, slash)) == 0) continue;
      out.push_back({i + 1, path});
    }
  }
  return out;
}

// A figure the prose beside a run block quotes: a number with exactly two
// decimals and a unit of time or bandwidth (`852.87 us`, `68.85 GB/s`), as
// weft-sim and weft-bench print virtual times and bandwidths. Figures of
// other precision (`9.9 GB/s`, a link's figure; `2.7 ms`, a wall-clock
// median) are derived or measured elsewhere and are not checked.
struct QuotedFigure {
  size_t line = 0;     // 1-based
  std::string figure;  // as quoted: "852.87 us"
  std::string number;  // "852.87"
  // The run blocks the figure's paragraph touches: one of them must show
  // the number.
  std::vector<const Block*> beside;
};

// A paragraph's first and last line indices (0-based); first > last: none.
struct Paragraph {
  size_t first = 1;
  size_t last = 0;
  bool empty() const { return first > last; }
};

inline bool ends_paragraph(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  return line.empty() || is_fence(line) || absl::StartsWith(line, "<!--");
}

// The paragraph that ends right above line `above`, blank lines between
// skipped; none when a fence or a marker comes first.
inline Paragraph paragraph_above(const std::vector<std::string>& lines,
                                 size_t above) {
  size_t i = above;
  while (i > 0 && absl::StripAsciiWhitespace(lines[i - 1]).empty()) --i;
  if (i == 0 || ends_paragraph(lines[i - 1])) return {};
  Paragraph p{i - 1, i - 1};
  while (p.first > 0 && !ends_paragraph(lines[p.first - 1])) --p.first;
  return p;
}

// The paragraph that starts right below line `below`, as paragraph_above().
inline Paragraph paragraph_below(const std::vector<std::string>& lines,
                                 size_t below) {
  size_t i = below + 1;
  while (i < lines.size() && absl::StripAsciiWhitespace(lines[i]).empty()) {
    ++i;
  }
  if (i >= lines.size() || ends_paragraph(lines[i])) return {};
  Paragraph p{i, i};
  while (p.last + 1 < lines.size() && !ends_paragraph(lines[p.last + 1])) {
    ++p.last;
  }
  return p;
}

// Every figure quoted in the paragraph right before a run block's marker
// or right after its closing fence; a paragraph between two run blocks is
// beside both. `blocks` are blocks_of(page, text).
inline std::vector<QuotedFigure> figures_beside_run_blocks(
    const std::string& text, const std::vector<Block>& blocks) {
  static const std::regex kFigure(
      R"((^|[^0-9A-Za-z_.])([0-9]+\.[0-9]{2}) ?(us|ms|ns|GB/s)(?![A-Za-z0-9_/]))");
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::vector<std::pair<Paragraph, std::vector<const Block*>>> paragraphs;
  const auto beside = [&paragraphs](Paragraph p, const Block* b) {
    if (p.empty()) return;
    auto it =
        std::find_if(paragraphs.begin(), paragraphs.end(),
                     [&p](const auto& q) { return q.first.first == p.first; });
    if (it == paragraphs.end()) {
      paragraphs.push_back({p, {b}});
    } else {
      it->second.push_back(b);
    }
  };
  for (const Block& b : blocks) {
    if (b.marker.kind != Kind::kRun) continue;
    const size_t marker = b.fence_line - 2;  // 0-based: the line before
    beside(paragraph_above(lines, marker), &b);
    const size_t closing = b.fence_line + b.body.size();  // 0-based
    if (closing < lines.size()) beside(paragraph_below(lines, closing), &b);
  }
  std::vector<QuotedFigure> out;
  for (const auto& [p, bs] : paragraphs) {
    for (size_t i = p.first; i <= p.last; ++i) {
      for (std::sregex_iterator m(lines[i].begin(), lines[i].end(), kFigure),
           end;
           m != end; ++m) {
        out.push_back({i + 1, absl::StrCat((*m)[2].str(), " ", (*m)[3].str()),
                       (*m)[2].str(), bs});
      }
    }
  }
  return out;
}

// Whether `body` shows `number` as a whole number (not part of a longer
// one: 68.78 is not in 168.785).
inline bool shows_number(const std::vector<std::string>& body,
                         const std::string& number) {
  const auto is_digit = [](char c) { return absl::ascii_isdigit(c); };
  for (const std::string& line : body) {
    for (size_t at = line.find(number); at != std::string::npos;
         at = line.find(number, at + 1)) {
      const size_t after = at + number.size();
      const bool alone_before =
          at == 0 || (!is_digit(line[at - 1]) && line[at - 1] != '.');
      const bool alone_after = after == line.size() || !is_digit(line[after]);
      if (alone_before && alone_after) return true;
    }
  }
  return false;
}

}  // namespace weft::testing::docs

#endif  // WEFT_TESTS_TOOLS_DOC_BLOCKS_H_
