// jaccl_config_in_code: a group from a jaccl::Config built in code, as in
// JACCL's examples/minimal_cfg.cpp: set_rank (from --rank, or as text from
// the variable --rank_env names), set_coordinator(--coordinator),
// set_devices (the layout file --layout, program_start.h), prefer_ring
// (--ring). Before starting it checks what Config promises without a
// network: a one-rank layout is neither a mesh nor a ring, so init() gives
// nullptr and init(strict) throws; a matrix that is not square makes
// set_devices throw std::invalid_argument. Then it starts the group and
// checks an all_sum and an all_gather.
//
//   jaccl_config_in_code --coordinator=HOST:PORT --layout=FILE
//                        [--rank=R | --rank_env=VAR] [--ring]
//
// Prints "config rank R: valid mesh yes|no, valid ring yes|no", then
// "Rank R of N" and "rank R: config in code OK". Exit codes: 0 every check
// passed, 1 one failed, 3 a call threw.
#include <jaccl/jaccl.h>

#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
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

int run(const conformance::Args& args) {
  const std::string coordinator = args.get("coordinator", "");
  check_offline(coordinator);
  const jaccl::Config cfg = conformance::config_from_args(args);
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
