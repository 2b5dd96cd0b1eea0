// tcp_rank: one rank of a weft group over TCP, one process, for the tests
// in this folder. It joins through weft::ProcessGroup::from_environment()
// (MLX_HOSTFILE or WEFT_HOSTFILE, MLX_RANK or WEFT_RANK, WEFT_COORDINATOR,
// WEFT_TIMEOUT_S, WEFT_CONNECT_TIMEOUT_S) and runs the scenario its first
// argument names:
//   every-op  every call of weft::Group, checked (every_op.h)
//   loop      checked all_sums until one fails or --seconds pass
//   reset     as loop, but after --after all_sums it resets its fabric
//             connections (SO_LINGER 0, then closed): an RST to each peer
//   elastic   checked all_sums until one fails; then shrinks the group
//             (ProcessGroup::shrink) and runs --after more over the
//             survivors
//   stranger  every-op, then waits until its fabric has refused
//             --refusals connections and prints the last refusal
// Flags: --expect_error=Code[,Code] (absl code names, e.g. Unavailable):
// an error of such a code is the expected outcome; --wait_for_go: after
// the group forms print "rank R: formed" and wait for a line on stdin;
// --hold: before exiting wait until stdin closes (so the test decides when
// this rank's side channel closes). Every wait has a deadline.
//
// Prints one line per result, "rank R: ...". Exit codes: 0 every result
// was right, or the error was an expected one; 1 a wrong result; 2 bad
// arguments; 3 an unexpected error; 4 the group did not start.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectives/dtype.h"
#include "fabric/clock.h"
#include "startup/process_group.h"
#include "tcp/tcp_fabric.h"
#include "tests/tcp_processes/every_op.h"
#include "tests/tcp_processes/socket_reset.h"

namespace weft::tcp_processes {
namespace {

enum Exit { kOk = 0, kWrong = 1, kUsage = 2, kError = 3, kNoGroup = 4 };

// The longest any wait on stdin lasts, so an abandoned rank ends.
constexpr int kStdinDeadlineMs = 60'000;

struct Args {
  std::string scenario;
  std::map<std::string, std::string> flags;

  bool has(const std::string& name) const { return flags.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const {
    const auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
  uint64_t number(const std::string& name, uint64_t fallback) const {
    uint64_t n = fallback;
    if (has(name) && !absl::SimpleAtoi(get(name, ""), &n)) {
      std::fprintf(stderr, "tcp_rank: --%s=%s is not a number\n", name.c_str(),
                   get(name, "").c_str());
      std::exit(kUsage);
    }
    return n;
  }
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) {
    std::fputs(
        "tcp_rank: name a scenario: every-op, loop, reset, elastic, "
        "stranger\n",
        stderr);
    std::exit(kUsage);
  }
  a.scenario = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      std::fprintf(stderr, "tcp_rank: unexpected argument '%s'\n", argv[i]);
      std::exit(kUsage);
    }
    const size_t eq = arg.find('=');
    a.flags[arg.substr(2, eq == std::string::npos ? eq : eq - 2)] =
        eq == std::string::npos ? "1" : arg.substr(eq + 1);
  }
  return a;
}

void say(const std::string& rank, const std::string& text) {
  const std::string line = absl::StrCat("rank ", rank, ": ", text, "\n");
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

// A line on stdin (true), or its end or the deadline (false).
bool read_stdin_line() {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(kStdinDeadlineMs);
  std::string line;
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c = 0;
    if (::read(STDIN_FILENO, &c, 1) != 1) return false;
    if (c == '\n') return true;
  }
  return false;
}

// The error of an operation: expected or not.
int ended_with(const std::string& rank, const Args& args,
               const absl::Status& status) {
  const std::string code = absl::StatusCodeToString(status.code());
  const std::vector<std::string> expected =
      absl::StrSplit(args.get("expect_error", ""), ',', absl::SkipEmpty());
  // absl spells codes UNAVAILABLE; the flag takes Unavailable too.
  for (const std::string& e : expected) {
    std::string upper = e;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
    std::string joined = code;
    joined.erase(std::remove(joined.begin(), joined.end(), '_'), joined.end());
    if (upper == code || upper == joined) {
      say(rank, absl::StrCat("expected error: ", code, ": ", status.message()));
      return kOk;
    }
  }
  say(rank, absl::StrCat("error: ", code, ": ", status.message()));
  return kError;
}

// Checked all_sums until one fails or `seconds` pass; with `reset_after`,
// the fabric's connections are reset after that many.
int loop(ProcessGroup& pg, const std::string& rank, const Args& args,
         uint64_t reset_after) {
  const uint64_t count = args.number("count", 1 << 16);
  const uint64_t seconds = args.number("seconds", 20);
  const TimeNs end_ns = deadline_after(WallClock().now_ns(), seconds * kNsPerS);
  uint64_t done = 0;
  while (WallClock().now_ns() < end_ns) {
    if (done == reset_after) {
      const int reset = reset_fabric_connections(pg.config().tcp_hosts);
      say(rank, absl::StrCat("reset ", reset, " fabric connections"));
    }
    absl::Status status;
    if (!checked_all_sum(pg.group(), count, done, &status)) {
      say(rank, absl::StrCat("loop: WRONG result in iteration ", done));
      return kWrong;
    }
    if (!status.ok()) return ended_with(rank, args, status);
    if (++done == 1) say(rank, "looping");
  }
  say(rank, absl::StrCat("loop: ", done, " all_sums OK"));
  return kOk;
}

// Checked all_sums until one fails (a rank died); then
// ProcessGroup::shrink(), the survivors resume from the lowest step one of
// them has not finished (an all_min over the shrunk group: one may have
// finished a step whose sum the others never got), and run --after more.
// An error before the shrink's, or after it, ends the rank as loop's do.
int elastic(ProcessGroup& pg, const std::string& rank, const Args& args) {
  const uint64_t count = args.number("count", 1 << 12);
  const uint64_t after = args.number("after", 50);
  const TimeNs end_ns = deadline_after(WallClock().now_ns(),
                                       args.number("seconds", 20) * kNsPerS);
  uint64_t step = 0;
  uint64_t last = UINT64_MAX;  // set by the shrink
  while (step < last) {
    if (last == UINT64_MAX && WallClock().now_ns() >= end_ns) {
      say(rank, "error: no rank died");
      return kError;
    }
    absl::Status status;
    if (!checked_all_sum(pg.group(), count, step, &status)) {
      say(rank, absl::StrCat("elastic: WRONG result in step ", step));
      return kWrong;
    }
    if (status.ok()) {
      if (++step == 1) say(rank, "looping");
      continue;
    }
    if (last != UINT64_MAX) return ended_with(rank, args, status);
    say(rank,
        absl::StrCat("elastic: step ", step, " failed (",
                     absl::StatusCodeToString(status.code()), "); shrinking"));
    if (absl::Status s = pg.shrink(); !s.ok()) return ended_with(rank, args, s);
    int32_t mine = static_cast<int32_t>(step);
    int32_t lowest = 0;
    absl::Status m = pg.group().all_min(
        std::as_bytes(std::span(&mine, 1)),
        std::as_writable_bytes(std::span(&lowest, 1)), DType::kInt32);
    if (!m.ok()) return ended_with(rank, args, m);
    step = static_cast<uint64_t>(lowest);
    last = step + after;
  }
  say(rank, absl::StrCat("elastic: ", after,
                         " all_sums OK after the shrink, now rank ",
                         pg.group().rank(), " of ", pg.group().size()));
  return kOk;
}

int every_op(ProcessGroup& pg, const std::string& rank, const Args& args) {
  const Tally t = run_every_op(pg.group(), args.number("count", kLargeCount));
  if (t.wrong > 0) return kWrong;
  if (t.errors > 0) return ended_with(rank, args, pg.group().health());
  say(rank, absl::StrCat("every-op: ", t.correct, " results, all OK"));
  return kOk;
}

// Every-op, then waits (driving the fabric) until it refused `refusals`.
int stranger(ProcessGroup& pg, const std::string& rank, const Args& args) {
  if (const int code = every_op(pg, rank, args); code != kOk) return code;
  auto* fabric = dynamic_cast<tcp::TcpFabric*>(&pg.fabric());
  if (fabric == nullptr) {
    say(rank, "error: the group's fabric is not weft::tcp");
    return kError;
  }
  const uint64_t want = args.number("refusals", 0);
  const TimeNs end_ns = deadline_after(WallClock().now_ns(), 30 * kNsPerS);
  while (fabric->refused_connections() < want &&
         WallClock().now_ns() < end_ns) {
    fabric->idle(deadline_after(WallClock().now_ns(), 100 * kNsPerMs));
  }
  say(rank,
      absl::StrCat("refused ", fabric->refused_connections(),
                   " connections; last: ", fabric->last_refusal().message()));
  return fabric->refused_connections() >= want ? kOk : kError;
}

int run(const Args& args) {
  const char* env_rank = std::getenv("WEFT_RANK");
  if (env_rank == nullptr) env_rank = std::getenv("MLX_RANK");
  const std::string rank = env_rank != nullptr ? env_rank : "?";
  absl::StatusOr<std::unique_ptr<ProcessGroup>> pg =
      ProcessGroup::from_environment();
  if (!pg.ok()) {
    say(rank, absl::StrCat("start failed: ",
                           absl::StatusCodeToString(pg.status().code()), ": ",
                           pg.status().message()));
    return kNoGroup;
  }
  if (args.has("wait_for_go")) {
    say(rank, "formed");
    if (!read_stdin_line()) {
      say(rank, "error: no go on stdin");
      return kError;
    }
  }
  int code = kUsage;
  if (args.scenario == "every-op") {
    code = every_op(**pg, rank, args);
  } else if (args.scenario == "loop") {
    code = loop(**pg, rank, args, /*reset_after=*/UINT64_MAX);
  } else if (args.scenario == "reset") {
    code = loop(**pg, rank, args, args.number("after", 3));
  } else if (args.scenario == "elastic") {
    code = elastic(**pg, rank, args);
  } else if (args.scenario == "stranger") {
    code = stranger(**pg, rank, args);
  } else {
    std::fprintf(stderr, "tcp_rank: no scenario '%s'\n", args.scenario.c_str());
  }
  // No waiting for the others before leaving: a rank that is done may
  // destroy its group at once, and a slower peer still finishes.
  if (args.has("hold")) {
    say(rank, "holding");
    while (read_stdin_line()) {
    }
  }
  return code;
}

}  // namespace
}  // namespace weft::tcp_processes

int main(int argc, char** argv) {
  return weft::tcp_processes::run(weft::tcp_processes::parse(argc, argv));
}
