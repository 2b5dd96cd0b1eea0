// jaccl_staggered_barrier: ranks reach Group::barrier() at different times
// (rank r first waits r * --stagger_ms), as in JACCL's
// examples/minimal_barrier.cpp, and check what barrier() promises: when it
// returns, every rank has called it. Before each barrier a rank writes a
// file into --dir (written under a temporary name, then renamed, so it is
// whole when it exists); after it, every rank reads every rank's file. The
// stagger makes a barrier that returns early fail the check; the check
// itself does not depend on how long anyone waited. Then an all_sum
// confirms the group is healthy.
//
//   jaccl_staggered_barrier --dir=DIR [--stagger_ms=M] [--rounds=N]
//                           [--start=env|config ...]
//
// Exit codes: 0 every check passed ("rank R: N barriers OK, all_sum OK"),
// 1 a rank's file was missing or wrong after a barrier, or the all_sum was
// wrong; 3 a call threw.
#include <jaccl/jaccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "program_start.h"

namespace {

std::string mark_path(const std::string& dir, int round, int rank) {
  return dir + "/round" + std::to_string(round) + "_rank" +
         std::to_string(rank);
}

std::string mark_text(int round, int rank) {
  return "rank " + std::to_string(rank) + " reached barrier " +
         std::to_string(round);
}

void write_mark(const std::string& dir, int round, int rank) {
  const std::string path = mark_path(dir, round, rank);
  {
    std::ofstream out(path + ".tmp");
    out << mark_text(round, rank);
    if (!out) throw std::runtime_error("cannot write " + path + ".tmp");
  }
  if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + path + ".tmp");
  }
}

std::string read_mark(const std::string& dir, int round, int rank) {
  std::ifstream in(mark_path(dir, round, rank));
  std::string text;
  std::getline(in, text);
  return text;
}

int run(const conformance::Args& args) {
  const std::string dir = args.get("dir", "");
  if (dir.empty()) throw std::invalid_argument("--dir is required");
  const long stagger_ms = args.get_int("stagger_ms", 20);
  const int rounds = static_cast<int>(args.get_int("rounds", 3));
  const std::shared_ptr<jaccl::Group> group = conformance::start_group(args);
  const int rank = group->rank(), size = group->size();
  int wrong = 0;
  for (int round = 0; round < rounds; ++round) {
    // Staggered arrival; the wait is what makes an early return visible,
    // not what the check relies on.
    std::this_thread::sleep_for(std::chrono::milliseconds(stagger_ms * rank));
    write_mark(dir, round, rank);
    std::cout << "rank " << rank << " entering barrier " << round << std::endl;
    group->barrier();
    for (int r = 0; r < size; ++r) {
      const std::string text = read_mark(dir, round, r);
      if (text != mark_text(round, r)) {
        ++wrong;
        std::cout << "FAIL rank " << rank << ": after barrier " << round
                  << ", rank " << r << "'s file holds '" << text
                  << "', expected '" << mark_text(round, r) << "'" << std::endl;
      }
    }
  }
  const int32_t in = rank + 1;
  int32_t out = 0;
  group->all_sum(&in, &out, sizeof(in), jaccl::Int32);
  if (out != size * (size + 1) / 2) {
    std::cout << "FAIL rank " << rank << ": all_sum after the barriers gave "
              << out << ", expected " << size * (size + 1) / 2 << std::endl;
    return 1;
  }
  if (wrong > 0) return 1;
  std::cout << "rank " << rank << ": " << rounds << " barriers OK, all_sum OK"
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return conformance::run_main("jaccl_staggered_barrier", [&] {
    return run(conformance::Args(argc, argv));
  });
}
