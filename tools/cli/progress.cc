#include "tools/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(bool, progress, false,
          "show progress on stderr even when it is not a terminal (a line "
          "a second and a last one); on a terminal it is always shown");

namespace weft::tools::cli {

const FlagSet kProgressFlags("progress", "progress of a long run on stderr",
                             FLAGS_progress);

namespace {

constexpr std::chrono::seconds kInterval{1};
constexpr int kBarWidth = 30;
// Back to the start of the line and erase it (a VT100 sequence every
// terminal emulator understands).
constexpr char kEraseLine[] = "\r\033[K";

}  // namespace

Progress::Progress(std::string_view what, std::string_view unit, uint64_t total)
    : what_(what),
      unit_(unit),
      total_(total),
      tty_(isatty(fileno(stderr)) != 0),
      last_(std::chrono::steady_clock::now()) {
  shown_ = tty_ || absl::GetFlag(FLAGS_progress);
}

void Progress::update(uint64_t done, const std::string& detail) {
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < kInterval && !(tty_ && !drawn_)) return;
  last_ = now;
  print(done, detail);
}

void Progress::clear() {
  if (!drawn_) return;
  std::fputs(kEraseLine, stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::finish(uint64_t done, const std::string& detail) {
  if (!shown_) return;
  print(done, detail);
  if (tty_) std::fputs("\n", stderr);
  drawn_ = false;
}

void Progress::print(uint64_t done, const std::string& detail) {
  const char* sep = detail.empty() ? "" : ", ";
  const auto done_ull = static_cast<unsigned long long>(done);
  const auto total_ull = static_cast<unsigned long long>(total_);
  if (!tty_) {
    std::fprintf(stderr, "%s: %llu/%llu %s%s%s\n", what_.c_str(), done_ull,
                 total_ull, unit_.c_str(), sep, detail.c_str());
    return;
  }
  const int filled =
      total_ == 0 ? kBarWidth : static_cast<int>(kBarWidth * done / total_);
  std::fprintf(stderr, "%s%s: [%s%s] %llu/%llu %s%s%s", kEraseLine,
               what_.c_str(), std::string(filled, '#').c_str(),
               std::string(kBarWidth - filled, ' ').c_str(), done_ull,
               total_ull, unit_.c_str(), sep, detail.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace weft::tools::cli
