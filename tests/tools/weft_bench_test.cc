// weft-bench, run as the built binary: nccl-tests' table (columns, rows,
// footer), its short options, --json (busbw = algbw x the op's bus factor,
// computed here), --plot (an SVG with one polyline per series), --model
// (the ring's cost and the bound over the group's algorithms, computed here
// from the tb5 figures), and bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kRanks = 8;  // weft-bench's default on the simulator
constexpr char kAllOps[] =
    "--op=all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all,"
    "sendrecv";

ToolResult bench(const std::string& args, const std::string& env = "") {
  return run_tool(WEFT_BENCH_PATH, args, env);
}

// Result rows: lines not starting with '#'.
std::vector<std::vector<std::string>> result_rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(out)) {
    if (!line.empty() && line[0] != '#') rows.push_back(fields_of(line));
  }
  return rows;
}

// nccl-tests' bus bandwidth factors, written out independently of weft.
double bus_factor(const std::string& op) {
  const double n = kRanks;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all")
    return (n - 1) / n;
  return 1;  // broadcast, reduce, sendrecv
}

TEST(WeftBench, TableHasNcclTestsColumnsRowsAndFooter) {
  const ToolResult r = bench("-b 4K -e 64K -f 4 -w 0 -n 2");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  bool header = false;
  for (const std::string& line : lines) {
    if (fields_of(line) ==
        std::vector<std::string>{"#", "size", "count", "type", "redop", "root",
                                 "time", "algbw", "busbw", "#wrong", "time",
                                 "algbw", "busbw", "#wrong"}) {
      header = true;
    }
  }
  EXPECT_TRUE(header) << r.out;
  EXPECT_THAT(r.out, HasSubstr("out-of-place"));
  EXPECT_THAT(r.out, HasSubstr("in-place"));
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;  // 4K, 16K, 64K
  const char* sizes[] = {"4096", "16384", "65536"};
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 13u);
    EXPECT_EQ(rows[i][0], sizes[i]);
    EXPECT_EQ(rows[i][1], std::to_string(std::stoul(sizes[i]) / 4));
    EXPECT_EQ(rows[i][2], "float");
    EXPECT_EQ(rows[i][3], "sum");
    EXPECT_EQ(rows[i][4], "-1");
    EXPECT_EQ(rows[i][8], "0");   // #wrong out of place
    EXPECT_EQ(rows[i][12], "0");  // #wrong in place
  }
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 0 OK"));
  EXPECT_THAT(r.out, HasSubstr("# #wrong total         : 0"));
  const size_t avg = r.out.find("# Avg bus bandwidth    : ");
  ASSERT_NE(avg, std::string::npos);
  EXPECT_GT(std::stod(r.out.substr(avg + 25)), 0);
}

TEST(WeftBench, ShortOptionsMeanTheLongFlags) {
  const ToolResult s = bench("-b 8K -e16K -f 2 -w 0 -n 1 -c 1 -d half -o max");
  const ToolResult l = bench(
      "--minbytes=8K --maxbytes=16K --stepfactor=2 --warmup_iters=0 "
      "--iters=1 --check=1 --datatype=float16 --redop=max");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(s.out, l.out);
  const auto rows = result_rows(s.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][2], "half");
  EXPECT_EQ(rows[0][3], "max");
}

TEST(WeftBench, JsonBusBandwidthIsAlgorithmBandwidthTimesTheFactor) {
  const std::string path = scratch_path("results.json");
  const ToolResult r = bench(std::string(kAllOps) +
                             " -b 64K -e 1M -f 4 -w 0 -n 1 --json=" + path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["ranks"], kRanks);
  EXPECT_EQ(doc["clock"], "virtual");
  ASSERT_EQ(doc["blocks"].size(), 7u);
  for (const auto& block : doc["blocks"]) {
    const std::string op = block["op"];
    ASSERT_EQ(block["results"].size(), 3u) << op;
    EXPECT_EQ(block["wrong_total"], 0) << op;
    for (const auto& row : block["results"]) {
      for (const char* place : {"out_of_place", "in_place"}) {
        const auto& m = row[place];
        if (op == "sendrecv" && std::string(place) == "in_place") {
          EXPECT_TRUE(m.is_null());  // no in-place send/recv
          continue;
        }
        ASSERT_TRUE(m.is_object()) << op << " " << place;
        const double size = row["bytes"];
        const double time_us = m["time_us"];
        const double algbw = m["algbw_gb_per_s"];
        EXPECT_NEAR(algbw, size / 1e9 / (time_us / 1e6), 1e-9 * algbw) << op;
        EXPECT_NEAR(m["busbw_gb_per_s"].get<double>(), algbw * bus_factor(op),
                    1e-9 * algbw)
            << op;
        EXPECT_EQ(m["nwrong"], 0) << op;
      }
    }
  }
}

TEST(WeftBench, JsonCountsTheFramesEachMeasurementSent) {
  // 1 KiB fits one frame; a mesh all-reduce sends it to every peer: n(n-1)
  // frames an iteration. Out of place: the one timed (and checked)
  // iteration; in place: that and a fresh checked one.
  const std::string path = scratch_path("counters.json");
  const ToolResult r = bench(
      "--op=all_reduce --algorithm=mesh -b 1K -e 1K -w 0 -n 1 --json=" + path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  const auto& row = doc["blocks"][0]["results"][0];
  const uint64_t per_iteration = kRanks * (kRanks - 1);
  const std::pair<const char*, uint64_t> expected[] = {
      {"out_of_place", per_iteration}, {"in_place", 2 * per_iteration}};
  for (const auto& [place, frames] : expected) {
    const auto& c = row[place]["counters"];
    ASSERT_TRUE(c.is_object()) << place << ": " << row.dump();
    EXPECT_EQ(c["frames_sent"], frames) << place;
    EXPECT_EQ(c["frames_received"], frames) << place;
    EXPECT_EQ(c["frames_resent"], 0) << place;
    EXPECT_EQ(c["duplicates_dropped"], 0) << place;
    EXPECT_EQ(c["deadlines_hit"], 0) << place;
  }
}

// The SVG's element names in document order, after checking that every
// element opened is closed in order (a small XML well-formedness check).
std::vector<std::string> svg_elements(const std::string& svg, bool* balanced) {
  std::vector<std::string> names, open;
  *balanced = true;
  for (size_t at = svg.find('<'); at != std::string::npos;
       at = svg.find('<', at + 1)) {
    const size_t end = svg.find('>', at);
    if (end == std::string::npos) {
      *balanced = false;
      break;
    }
    const std::string tag = svg.substr(at + 1, end - at - 1);
    if (tag.empty() || tag[0] == '?') continue;  // the XML declaration
    const bool closing = tag[0] == '/';
    const std::string name = tag.substr(
        closing ? 1 : 0, tag.find_first_of(" \t\n/", 1) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name) *balanced = false;
      if (!open.empty()) open.pop_back();
      continue;
    }
    names.push_back(name);
    if (tag.back() != '/') open.push_back(name);
  }
  *balanced = *balanced && open.empty();
  return names;
}

TEST(WeftBench, PlotIsAnSvgWithOnePolylinePerOpAndAlgorithm) {
  const std::string path = scratch_path("plot.svg");
  const ToolResult r = bench(
      "--op=all_reduce,all_gather --algorithm=mesh,ring -b 4K -e 1M "
      "-f 4 -w 0 -n 1 -c 0 --plot=" +
      path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string svg = read_text(path);
  bool balanced = false;
  const std::vector<std::string> names = svg_elements(svg, &balanced);
  EXPECT_TRUE(balanced);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "svg");
  EXPECT_EQ(std::count(names.begin(), names.end(), "polyline"), 4);
  for (const char* legend : {"all_reduce mesh", "all_reduce ring",
                             "all_gather mesh", "all_gather ring"}) {
    EXPECT_THAT(svg, HasSubstr(std::string(">") + legend + "<")) << legend;
  }
  EXPECT_THAT(svg, HasSubstr("bus bandwidth (GB/s)"));
  EXPECT_THAT(svg, HasSubstr(">1M<"));  // a log2 tick label
}

// The Thakur-Rabenseifner-Gropp ring cost on tb5 (latency 3793 ns,
// per-message overhead 437 ns, 80 Gbit/s), with weft's two ring directions.
double ring_model_us(const std::string& op, double bytes) {
  const double p = kRanks, alpha = 3793 + 437, beta = 1e9 / 1e10;
  const double paths = 2;
  const double steps = op == "all_reduce" ? 2 : 1;
  return steps * ((p - 1) * alpha + bytes * (p - 1) / p * beta / paths) / 1e3;
}

TEST(WeftBench, ModelPrintsTheRingCostAndTheRatio) {
  const std::string path = scratch_path("model.json");
  const ToolResult r = bench(
      "--op=all_reduce,all_gather,reduce_scatter --algorithm=ring --model "
      "-b 1M -e 4M -f 4 -w 0 -n 1 --json=" +
      path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("model"));
  EXPECT_THAT(r.out, HasSubstr("ratio"));
  EXPECT_THAT(r.out, HasSubstr("t/bound"));
  for (const auto& row : result_rows(r.out)) EXPECT_EQ(row.size(), 21u);
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(path), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  for (const auto& block : doc["blocks"]) {
    for (const auto& row : block["results"]) {
      const auto& m = row["out_of_place"];
      const double want = ring_model_us(block["op"], row["bytes"]);
      EXPECT_NEAR(m["model_us"].get<double>(), want, 1e-6 * want);
      EXPECT_NEAR(m["ratio"].get<double>(), m["time_us"].get<double>() / want,
                  1e-6);
    }
  }
}

// The bound: the lowest lower bound of the link model over the algorithms
// the group can run, written out here for tb5.
struct ExpectedBound {
  double us;
  std::string algorithm;
};
constexpr double kAlphaNs = 3793 + 437, kBetaNsPerByte = 1e9 / 1e10;

// S steps of B bytes a link: max(S alpha, alpha + S B beta), in us.
double lower_bound_us(double steps, double bytes_per_step) {
  return std::max(steps * kAlphaNs,
                  kAlphaNs + steps * bytes_per_step * kBetaNsPerByte) /
         1e3;
}

// The all-reduce's: the exchange (1 step of n), the scatter (2 of n/p),
// the ring (2(p-1) of n/(2p), n/2 for two ranks); a tie goes to the one
// listed first.
ExpectedBound all_reduce_bound(double p, double bytes, bool mesh) {
  const double directions = p > 2 ? 2 : 1;
  std::vector<ExpectedBound> candidates;
  if (mesh) {
    candidates.push_back({lower_bound_us(1, bytes), "mesh_exchange"});
    candidates.push_back({lower_bound_us(2, bytes / p), "mesh_scatter"});
  }
  candidates.push_back(
      {lower_bound_us(2 * (p - 1), bytes / (p * directions)), "ring"});
  ExpectedBound best = candidates[0];
  for (const ExpectedBound& c : candidates) {
    if (c.us < best.us) best = c;
  }
  return best;
}

// Every row gets the bound, whichever algorithm ran: on the 8-rank mesh
// the exchange's below 41 KiB (where n beta = alpha), the scatter's above;
// on a ring of 4 the ring's.
TEST(WeftBench, ModelPrintsTheBoundOverTheGroupsAlgorithms) {
  struct World {
    std::string flags;
    double ranks;
    bool mesh;
  };
  for (const World& w :
       {World{"", kRanks, true}, World{"--ranks=4 --topology=ring", 4, false},
        World{"--ranks=2", 2, true}}) {
    const std::string path = scratch_path("bound.json");
    const ToolResult r =
        bench(w.flags +
              " --algorithm=auto,ring --model -b 16K -e 1M -f 4 "
              "-w 0 -n 1 -c 0 --json=" +
              path);
    ASSERT_EQ(r.code, 0) << w.flags << r.out << r.err;
    const nlohmann::json doc =
        nlohmann::json::parse(read_text(path), nullptr, false);
    ASSERT_FALSE(doc.is_discarded());
    std::set<std::string> algorithms;
    for (const auto& block : doc["blocks"]) {
      ASSERT_EQ(block["results"].size(), 4u);
      for (const auto& row : block["results"]) {
        const ExpectedBound want =
            all_reduce_bound(w.ranks, row["bytes"], w.mesh);
        for (const char* placement : {"out_of_place", "in_place"}) {
          const auto& m = row[placement];
          EXPECT_NEAR(m["bound_us"].get<double>(), want.us, 1e-6 * want.us)
              << w.flags << " " << row["bytes"];
          EXPECT_EQ(m["bound_algorithm"], want.algorithm)
              << w.flags << " " << row["bytes"];
          EXPECT_NEAR(m["bound_ratio"].get<double>(),
                      m["time_us"].get<double>() / want.us, 1e-6);
        }
        algorithms.insert(want.algorithm);
      }
    }
    // The worlds cover each algorithm's side of the crossover.
    if (w.ranks == kRanks) {
      EXPECT_EQ(algorithms,
                (std::set<std::string>{"mesh_exchange", "mesh_scatter"}));
    }
  }
}

// --model_only measures nothing and lists, per size, every algorithm the
// group can run with its steps, bytes per step, step-by-step cost and lower
// bound, the lowest lower bound marked as the bound; on a ring only the
// ring.
TEST(WeftBench, ModelOnlyListsEachAlgorithmAndMarksTheBound) {
  const ToolResult r = bench("--model_only -b 1K -e 256M -f 16");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const double p = kRanks;
  struct Want {
    const char* algorithm;
    double steps, bytes_per_step;
  };
  size_t rows = 0;
  for (const auto& row : result_rows(r.out)) {
    ASSERT_GE(row.size(), 5u);
    const double n = std::stod(row[0]);
    const std::map<std::string, Want> want = {
        {"mesh_exchange", {"mesh_exchange", 1, n}},
        {"mesh_scatter", {"mesh_scatter", 2, n / p}},
        {"ring", {"ring", 2 * (p - 1), n / (2 * p)}}};
    ASSERT_TRUE(want.contains(row[1])) << row[1];
    const Want& w = want.at(row[1]);
    EXPECT_EQ(std::stod(row[2]), w.steps) << row[1];
    EXPECT_NEAR(std::stod(row[3]), w.bytes_per_step, 0.01) << row[1];
    EXPECT_NEAR(std::stod(row[4]),
                w.steps * (kAlphaNs + w.bytes_per_step * kBetaNsPerByte) / 1e3,
                0.01);
    EXPECT_NEAR(std::stod(row[5]), lower_bound_us(w.steps, w.bytes_per_step),
                0.01);
    const ExpectedBound bound = all_reduce_bound(p, n, true);
    EXPECT_EQ(row.size() == 7 && row[6] == "bound", bound.algorithm == row[1])
        << n << " " << row[1];
    ++rows;
  }
  EXPECT_EQ(rows, 3u * 5u);  // 1K, 16K, 256K, 4M, 64M, three algorithms each

  const ToolResult ring =
      bench("--model_only --ranks=4 --topology=ring -b 64K -e 64K");
  ASSERT_EQ(ring.code, 0) << ring.err;
  const auto ring_rows = result_rows(ring.out);
  ASSERT_EQ(ring_rows.size(), 1u) << ring.out;
  EXPECT_EQ(ring_rows[0][1], "ring");
  EXPECT_EQ(ring_rows[0].back(), "bound");
}

TEST(WeftBench, UncheckedRunsSayNA) {
  const ToolResult r = bench("-b 4K -e 4K -w 0 -n 1 -c 0");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][8], "N/A");
  EXPECT_EQ(rows[0][12], "N/A");
}

// Registered buffers (operations sending from and receiving into the
// user's memory) give every row correct, in place and out of place, over
// sizes of one frame to many, on the mesh and the ring, with 1% loss.
TEST(WeftBench, RegisteredBuffersAreCheckedLikeStagedOnes) {
  const ToolResult r = bench(
      "-b 4K -e 4M -f 32 -w 1 -n 2 --registered --loss=0.01 "
      "--algorithm=mesh,ring");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 6u) << r.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row[8], "0") << r.out;
    EXPECT_EQ(row[12], "0") << r.out;
  }
}

// --link=ideal takes no virtual time: the time is 0.00 and the bandwidths,
// which would be infinite, are "-" in the table (as in weft-sim's), in the
// footer's average, and null in the JSON.
TEST(WeftBench, IdealLinkBandwidthsAreDashesNotZeros) {
  const std::string path = scratch_path("ideal.json");
  const ToolResult r = bench("--link=ideal -b 4K -e 4K --json=" + path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0][5], "0.00");
  EXPECT_EQ(rows[0][6], "-");
  EXPECT_EQ(rows[0][7], "-");
  EXPECT_EQ(rows[0][10], "-");
  EXPECT_EQ(rows[0][11], "-");
  EXPECT_THAT(r.out, HasSubstr("# Avg bus bandwidth    : - \n"));
  const nlohmann::json doc = nlohmann::json::parse(read_text(path));
  EXPECT_TRUE(doc["blocks"][0]["average_busbw_gb_per_s"].is_null());
  const nlohmann::json& m = doc["blocks"][0]["results"][0]["out_of_place"];
  EXPECT_EQ(m["time_us"], 0.0);
  EXPECT_TRUE(m["algbw_gb_per_s"].is_null()) << m;
  EXPECT_TRUE(m["busbw_gb_per_s"].is_null()) << m;
}

// all_to_all over 8 ranks of floats moves multiples of 32 bytes (one
// float per rank pair): asked 1, 4, 16, 64 and 256 bytes, it measures 32
// (1, 4 and 16 raised to it, once), 64 and 256, and says so on stderr once.
TEST(WeftBench, SizesThatRoundAlikeGiveOneRow) {
  const ToolResult r = bench("-b 1 -e 256 -f 4 --op=all_to_all");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[0][0], "32");
  EXPECT_EQ(rows[0][1], "1");
  EXPECT_EQ(rows[1][0], "64");
  EXPECT_EQ(rows[2][0], "256");
  EXPECT_EQ(r.err,
            "weft-bench: all_to_all of float on 8 ranks moves at least 32 "
            "bytes (count 1); smaller sizes are measured at 32 bytes\n");
}

void expect_bad_input(const std::string& args, const std::string& what,
                      const std::string& env = "") {
  testing::expect_bad_input(WEFT_BENCH_PATH, "weft-bench", args, what, env);
}

// nccl-tests' -d all and -o all: every type, and for a reducing op every
// reduction, each measured and checked (a block each); an op that does not
// reduce runs once per type.
TEST(WeftBench, AllTypesAndAllReductionsAsNcclTests) {
  const ToolResult r = bench("-d all -o all -b 1K -e 1K -w 0 -n 1 --ranks=3");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const char* const types[] = {
      "bool",   "int8",   "int16", "int32",    "int64", "uint8",  "uint16",
      "uint32", "uint64", "half",  "bfloat16", "float", "double", "complex64"};
  const char* const redops[] = {"sum", "prod", "max", "min"};
  std::set<std::pair<std::string, std::string>> seen;
  for (const std::vector<std::string>& row : result_rows(r.out)) {
    ASSERT_EQ(row.size(), 13u);
    EXPECT_EQ(row[8], "0") << row[2] << " " << row[3];
    EXPECT_EQ(row[12], "0") << row[2] << " " << row[3];
    seen.insert({row[2], row[3]});
  }
  EXPECT_EQ(seen.size(), std::size(types) * std::size(redops)) << r.out;
  for (const char* type : types) {
    for (const char* redop : redops) {
      EXPECT_EQ(seen.count({type, redop}), 1u) << type << " " << redop;
    }
  }
  const ToolResult gather =
      bench("--op=all_gather -d all -o all -b 1K -e 1K -w 0 -n 1 --ranks=3");
  ASSERT_EQ(gather.code, 0) << gather.out << gather.err;
  const auto rows = result_rows(gather.out);
  ASSERT_EQ(rows.size(), std::size(types)) << gather.out;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][2], types[i]);
    EXPECT_EQ(rows[i][3], "none");
  }
}

// The chart is SVG: a file named for another format is refused before
// anything is measured, not filled with SVG.
TEST(WeftBench, APlotNamedForAnotherFormatIsBadInput) {
  expect_bad_input("-b 4K -e 4K --plot=busbw.png",
                   "--plot=busbw.png: weft-bench draws the chart as SVG only");
  EXPECT_FALSE(std::filesystem::exists(::testing::TempDir() + "/busbw.png"));
}

TEST(WeftBench, BadInputExits2WithOneLine) {
  expect_bad_input("-g 2", "-g");
  expect_bad_input("-b", "needs a value");
  expect_bad_input("-b 1M -e 4K", "larger than --maxbytes");
  expect_bad_input("-b 1X", "--minbytes=1X");
  expect_bad_input("--op=explode", "explode");
  expect_bad_input("--algorithm=fast", "fast");
  expect_bad_input("-d float128", "float128");
  expect_bad_input("-o avg", "avg");
  expect_bad_input("-n 0", "--iters=0");
  expect_bad_input("--fabric=udp", "--fabric=udp is none of sim, verbs, tcp");
  expect_bad_input("--no-such-flag=1", "unknown flag --no_such_flag");
  expect_bad_input("--trace=x.json", "--trace");
  expect_bad_input("--op=broadcast -r 8", "root 8");
  expect_bad_input("--algorithm=mesh --topology=ring", "every pair");
  expect_bad_input("stray", "unexpected argument");
  expect_bad_input("--model_only --json=m.json",
                   "--model_only measures nothing");
}

// Input that could only fail a later row, or the writing of the results,
// is refused before the first measurement: nothing on stdout (no header,
// no row), no JSON written.
TEST(WeftBench, WhatALaterRowOrTheOutputWouldFailOnIsCheckedFirst) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-r 7 --op=broadcast --ranks=4", "root 7 is outside the group of 4"},
      {"--op=all --ranks=1", "needs at least 2 ranks"},
      {"-b 4K -e 4K --json=/nonexistent/dir/r.json",
       "--json=/nonexistent/dir/r.json: cannot write there"},
      {"-b 4K -e 4K --plot=/nonexistent/dir/p.svg",
       "--plot=/nonexistent/dir/p.svg: cannot write there"},
      {"-b 4K -e 4K --json=/tmp", "--json=/tmp is a directory"}};
  for (const auto& [args, what] : cases) {
    expect_bad_input(args, what);
    EXPECT_EQ(bench(args).out, "") << args;
  }
  const std::string json = scratch_path("all1.json");
  EXPECT_EQ(bench("--op=all --ranks=1 --json=" + json).code, 2);
  EXPECT_FALSE(std::filesystem::exists(json));
}

// Without JACCL's environment the verbs fabric has no group to join.
TEST(WeftBenchVerbs, NoJacclEnvironmentIsBadInput) {
  expect_bad_input("--fabric=verbs -b 4K -e 4K", "JACCL_",
                   "env -u JACCL_RANK -u MLX_RANK "
                   "-u OMPI_COMM_WORLD_RANK -u SLURM_PROCID ");
}

// A TCP group is formed from a hostfile; without one, weft-bench says how
// to start it. With a hostfile, --fabric=verbs still means verbs: it needs
// the device JSON.
TEST(WeftBenchTcp, NoHostfileIsBadInput) {
  expect_bad_input("--fabric=tcp -b 4K -e 4K",
                   "weft-sim launch --fabric=tcp --ranks=N -- weft-bench "
                   "--fabric=tcp ..., or set MLX_HOSTFILE",
                   "env -u MLX_HOSTFILE -u WEFT_HOSTFILE ");
}

TEST(WeftBenchVerbs, AHostfileDoesNotMakeItTcp) {
  expect_bad_input("--fabric=verbs -b 4K -e 4K",
                   "JACCL_IBV_DEVICES (or MLX_IBV_DEVICES) is not set",
                   "env -u WEFT_HOSTFILE -u WEFT_FABRIC -u JACCL_IBV_DEVICES "
                   "-u MLX_IBV_DEVICES MLX_HOSTFILE=hosts.json MLX_RANK=0 ");
}

TEST(WeftBenchTcp, AContraryWeftFabricIsBadInput) {
  expect_bad_input("--fabric=tcp -b 4K -e 4K",
                   "--fabric=tcp, but WEFT_FABRIC=verbs",
                   "WEFT_FABRIC=verbs MLX_HOSTFILE=hosts.json ");
}

// WEFT_FABRIC names the group this process is a rank of (weft-sim launch
// sets it): a value that names no group fabric is refused, never read as
// "run the simulator".
TEST(WeftBench, AWeftFabricNamingNoGroupIsBadInput) {
  for (const std::string value : {"rdma", "sim"}) {
    expect_bad_input(
        "-b 4K -e 4K",
        "WEFT_FABRIC=" + value + " names no fabric weft-bench can join",
        "WEFT_FABRIC=" + value + " ");
  }
}

TEST(WeftBenchVerbs, MissingRdmaLibraryFailsCleanly) {
  const std::string devices = write_scratch("one_rank.json", "[[null]]");
  const ToolResult r =
      bench("--fabric=verbs -b 4K -e 4K",
            "JACCL_RANK=0 JACCL_IBV_DEVICES=" + devices +
                " WEFT_VERBS_LIBRARY=/nonexistent/libibverbs.so.1 ");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, StartsWith("weft-bench: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/libibverbs.so.1"));
  EXPECT_EQ(r.out, "");
}

#ifdef WEFT_SIM_VERBS_PATH
// One rank over the simulated verbs provider: the group forms from JACCL's
// environment and the table reports the provider's virtual time.
TEST(WeftBenchVerbs, OneRankOverTheSimulatedProvider) {
  const std::string devices = write_scratch("one_rank.json", "[[null]]");
  const std::string json = scratch_path("verbs.json");
  const ToolResult r = bench(
      "--fabric=verbs -b 4K -e 16K -f 4 -w 1 -n 2 --json=" + json,
      "JACCL_RANK=0 JACCL_IBV_DEVICES=" + devices +
          " WEFT_SIM_VERBS_RANKS=2 WEFT_VERBS_LIBRARY=" WEFT_SIM_VERBS_PATH
          " ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("virtual time (weft's simulated provider)"));
  const auto rows = result_rows(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][8], "0");
  EXPECT_EQ(rows[0][12], "0");
  // The counters come from the engine on this fabric too (one rank: it
  // sends nothing).
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  const auto& c = doc["blocks"][0]["results"][0]["out_of_place"]["counters"];
  ASSERT_TRUE(c.is_object()) << doc.dump();
  EXPECT_EQ(c["frames_sent"], 0);
  EXPECT_EQ(c["credit_stalls"], 0);
}
#endif

}  // namespace
}  // namespace weft::testing
