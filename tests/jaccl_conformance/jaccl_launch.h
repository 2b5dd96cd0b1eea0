// Runs the JACCL conformance programs one process per rank under
// `weft-sim launch` and reads what launch reports: each rank's exit, the
// run's end (finished, deadlock, ...), its virtual time and trace hash.
// Also writes the device layout a program builds its Config from, naming
// the devices as the simulated world names them
// (sim_<rank>_<peer>_<cable>, docs/simulation-server.md).
#ifndef WEFT_TESTS_JACCL_CONFORMANCE_JACCL_LAUNCH_H_
#define WEFT_TESTS_JACCL_CONFORMANCE_JACCL_LAUNCH_H_

#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {

// A world: ranks, topology (mesh or ring), cables per joined pair.
struct World {
  int ranks = 2;
  bool ring_topology = false;
  int cables = 1;

  std::string flags() const {
    return absl::StrCat("--ranks=", ranks,
                        " --topology=", ring_topology ? "ring" : "mesh",
                        " --cables=", cables);
  }
  bool joined(int a, int b) const {
    if (a == b) return false;
    if (!ring_topology) return true;
    return (a + 1) % ranks == b || (b + 1) % ranks == a;
  }
};

struct Launch {
  ToolResult tool;
  std::string end;         // "finished", "deadlock", "stopped", ...
  double virtual_us = -1;  // when the run ended, in virtual time
  std::string trace_hash;
  // Rank -> "exited N" or "killed by signal N".
  std::map<int, std::string> exits;
};

inline Launch parse_launch(ToolResult r) {
  Launch l;
  std::smatch m;
  static const std::regex kEnd(
      "weft-sim: ([a-z ]+) at virtual time ([0-9.]+) us");
  if (std::regex_search(r.out, m, kEnd)) {
    l.end = m[1].str();
    l.virtual_us = std::stod(m[2].str());
  }
  static const std::regex kHash("trace hash ([0-9a-f]{16})");
  if (std::regex_search(r.out, m, kHash)) l.trace_hash = m[1].str();
  static const std::regex kExit(
      "rank ([0-9]+) \\(pid [0-9]+\\): (exited [0-9]+|killed by signal "
      "[0-9]+)");
  for (const std::string& line : lines_of(r.out)) {
    if (std::regex_search(line, m, kExit)) {
      l.exits[std::stoi(m[1].str())] = m[2].str();
    }
  }
  l.tool = std::move(r);
  return l;
}

// `weft-sim launch` of `program` (one command line, or one per rank
// separated by " : ") with `flags` (world, faults) and `env` before it.
inline Launch launch(const std::string& flags, const std::string& program,
                     const std::string& env = "") {
  return parse_launch(run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --timeout_s=120 ", flags, " -- ", program), env));
}

// The layout file of program_start.h: one line per rank, "-" where two
// ranks are not joined, else the cables' device names joined by commas.
inline std::string write_layout(const World& w) {
  std::string text;
  for (int i = 0; i < w.ranks; ++i) {
    for (int j = 0; j < w.ranks; ++j) {
      if (j > 0) text += " ";
      if (!w.joined(i, j)) {
        text += "-";
        continue;
      }
      for (int c = 0; c < w.cables; ++c) {
        absl::StrAppend(&text, c > 0 ? "," : "", "sim_", i, "_", j, "_", c);
      }
    }
    text += "\n";
  }
  return write_scratch(absl::StrCat("layout_", w.ranks, ".txt"), text);
}

// One command per rank, "program --rank=r --coordinator=... --layout=...
// args", for a group built from a Config in code.
inline std::string per_rank_config(const std::string& program, const World& w,
                                   const std::string& args) {
  const std::string layout = write_layout(w);
  const std::string coordinator = absl::StrCat("127.0.0.1:", free_port());
  std::string line;
  for (int r = 0; r < w.ranks; ++r) {
    absl::StrAppend(&line, r > 0 ? " : " : "", program, " --start=config",
                    " --rank=", r, " --coordinator=", coordinator,
                    " --layout=", layout, " ", args);
  }
  return line;
}

// Every rank exited 0 and the run finished.
inline void expect_all_exited_zero(const Launch& l, int ranks) {
  EXPECT_EQ(l.tool.code, 0) << l.tool.out << l.tool.err;
  EXPECT_EQ(l.end, "finished") << l.tool.out;
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 0")
        << "rank " << r << "\n"
        << l.tool.out << l.tool.err;
  }
  EXPECT_THAT(l.tool.out, ::testing::Not(::testing::HasSubstr("FAIL")));
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_JACCL_CONFORMANCE_JACCL_LAUNCH_H_
