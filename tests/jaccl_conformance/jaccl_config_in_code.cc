// jaccl_config_in_code: a group from a jaccl::Config built in code, as in
// JACCL's examples/minimal_cfg.cpp: set_rank (from --rank, or as text from
// the variable --rank_env names), set_coordinator(--coordinator),
// set_devices (the layout file --layout, program_start.h), prefer_ring
// (--ring), and with --side_channel_dir a side channel of the program's own
// (set_all_gather_factory; files in that directory) in place of the
// coordinator. Before starting it checks what Config promises without a
// network: a one-rank layout is neither a mesh nor a ring, so init() gives
// nullptr and init(strict) throws; a matrix that is not square makes
// set_devices throw std::invalid_argument. Then it starts the group and
// checks an all_sum and an all_gather.
//
//   jaccl_config_in_code --coordinator=HOST:PORT --layout=FILE
//                        [--rank=R | --rank_env=VAR] [--ring]
//                        [--side_channel_dir=DIR]
//
// Prints "config rank R: valid mesh yes|no, valid ring yes|no", then
// "Rank R of N" and "rank R: config in code OK". Exit codes: 0 every check
// passed, 1 one failed, 3 a call threw.
#include <jaccl/jaccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "program_start.h"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::cout << "FAIL: " << what << std::endl;
}

void check_offline(const std::string& coordinator) {
  jaccl::Config one;
  one.set_rank(0).set_coordinator(coordinator).set_devices({{{}}});
  expect(!one.is_valid_mesh() && !one.is_valid_ring() && !one.is_valid(),
         "a one-rank layout counts as valid");
  expect(jaccl::init(one) == nullptr, "init of a one-rank Config gave a group");
  try {
    jaccl::init(one, /*strict=*/true);
    expect(false, "strict init of a one-rank Config did not throw");
  } catch (const std::runtime_error&) {
  }
  try {
    jaccl::Config().set_devices({{{}, {"a"}}, {{"b"}}});
    expect(false, "set_devices of a ragged matrix did not throw");
  } catch (const std::invalid_argument&) {
  }
}

// A side channel through files in `dir`: the k-th all-gather of rank r
// writes dir/agK_rR whole (a temporary name, then a rename) and reads every
// rank's, waiting for each at most 60 s.
jaccl::AllGatherFn file_all_gather(const std::string& dir, int rank, int size) {
  auto calls = std::make_shared<int>(0);
  return [dir, rank, size, calls](const char* src, char* dst, size_t n) {
    const std::string base = dir + "/ag" + std::to_string((*calls)++) + "_r";
    const std::string mine = base + std::to_string(rank);
    std::ofstream(mine + ".tmp", std::ios::binary)
        .write(src, static_cast<std::streamsize>(n));
    if (std::rename((mine + ".tmp").c_str(), mine.c_str()) != 0) {
      throw std::runtime_error("side channel: cannot rename " + mine);
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int r = 0; r < size; ++r) {
      const std::string path = base + std::to_string(r);
      std::ifstream in;
      while (!(in = std::ifstream(path, std::ios::binary))) {
        if (std::chrono::steady_clock::now() > deadline) {
          throw std::runtime_error("side channel: no " + path + " in 60 s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!in.read(dst + size_t(r) * n, static_cast<std::streamsize>(n))) {
        throw std::runtime_error("side channel: " + path + " is short");
      }
    }
  };
}

int run(const conformance::Args& args) {
  const std::string coordinator = args.get("coordinator", "");
  check_offline(coordinator);
  jaccl::Config cfg = conformance::config_from_args(args);
  if (args.has("side_channel_dir")) {
    const std::string dir = args.get("side_channel_dir", "");
    cfg.set_all_gather_factory([dir](int rank, int size) {
      std::cout << "side channel for rank " << rank << " of " << size
                << std::endl;
      return file_all_gather(dir, rank, size);
    });
  }
  std::cout << "config rank " << cfg.get_rank() << ": valid mesh "
            << (cfg.is_valid_mesh() ? "yes" : "no") << ", valid ring "
            << (cfg.is_valid_ring() ? "yes" : "no") << std::endl;
  expect(cfg.get_coordinator() == coordinator, "get_coordinator");
  expect(cfg.get_prefer_ring() == args.has("ring"), "get_prefer_ring");
  const std::shared_ptr<jaccl::Group> group = jaccl::init(cfg);
  if (!group) {
    std::cerr << "jaccl_config_in_code: init(cfg) gave no group" << std::endl;
    return 1;
  }
  const int rank = group->rank(), size = group->size();
  std::cout << "Rank " << rank << " of " << size << std::endl;
  if (args.has("rank")) expect(rank == args.get_int("rank", -1), "rank()");
  float input[10], output[10];
  for (int i = 0; i < 10; ++i) input[i] = float(i + 1) * float(rank + 1);
  group->all_sum(input, output, sizeof(input), jaccl::Float32);
  for (int i = 0; i < 10; ++i) {
    const float want = float(i + 1) * float(size * (size + 1) / 2);
    expect(output[i] == want, "all_sum element " + std::to_string(i));
  }
  const int32_t mine[2] = {rank, -rank};
  std::vector<int32_t> all(2 * size_t(size));
  group->all_gather(mine, all.data(), sizeof(mine));
  for (int r = 0; r < size; ++r) {
    expect(all[2 * r] == r && all[2 * r + 1] == -r,
           "all_gather block " + std::to_string(r));
  }
  if (failures > 0) return 1;
  std::cout << "rank " << rank << ": config in code OK" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return conformance::run_main("jaccl_config_in_code", [&] {
    return run(conformance::Args(argc, argv));
  });
}
