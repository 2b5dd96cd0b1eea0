// Scanning one file for Linux-only names and headers in the blocks a macOS
// build compiles.
#include "tools/include-check/darwin_scan.h"

#include <array>
#include <cctype>
#include <optional>
#include <set>
#include <utility>

namespace weft::tools::include_check {
namespace {

// MSG_NOSIGNAL: macOS sets SO_NOSIGPIPE on the socket instead;
// TCP_KEEPIDLE: macOS names it TCP_KEEPALIVE.
constexpr std::array<std::string_view, 16> kBannedNames = {
    "MSG_NOSIGNAL",
    "TCP_KEEPIDLE",
    "MADV_HUGEPAGE",
    "MAP_HUGETLB",
    "MAP_POPULATE",
    "SOCK_CLOEXEC",
    "SOCK_NONBLOCK",
    "accept4",
    "pipe2",
    "eventfd",
    "memfd_create",
    "signalfd",
    "TCP_USER_TIMEOUT",
    "SO_BINDTODEVICE",
    "sched_getcpu",
    "pthread_setaffinity_np"};
constexpr std::array<std::string_view, 2> kBannedPrefixes = {"epoll_",
                                                             "timerfd_"};
constexpr std::array<std::string_view, 8> kBannedHeaders = {
    "endian.h",    "byteswap.h",    "malloc.h",      "sys/sysinfo.h",
    "sys/epoll.h", "sys/eventfd.h", "sys/timerfd.h", "sys/signalfd.h"};
// Predefined on Linux (or by glibc), never on macOS.
constexpr std::array<std::string_view, 6> kLinuxMacros = {
    "__linux__",     "__linux",   "linux",
    "__gnu_linux__", "__GLIBC__", "__GLIBC_MINOR__"};

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The identifiers of a line of code (not the letters inside numbers).
std::vector<std::string_view> identifiers(std::string_view code) {
  std::vector<std::string_view> names;
  size_t i = 0;
  while (i < code.size()) {
    if (!is_identifier_char(code[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    bool number = std::isdigit(static_cast<unsigned char>(code[i])) != 0;
    while (i < code.size() && (is_identifier_char(code[i]) ||
                               (number && (code[i] == '.' || code[i] == '\''))))
      ++i;
    if (!number) names.push_back(code.substr(start, i - start));
  }
  return names;
}

// One #if group: whether the enclosing code may compile, whether an earlier
// branch surely did, and whether the current branch may.
struct Frame {
  bool parent_live = true;
  bool taken = false;
  bool live = true;
};

class Scanner {
 public:
  DarwinScan run(std::string_view text);

 private:
  bool live() const { return stack_.empty() || stack_.back().live; }
  Truth truth(std::string_view condition) const;
  bool conditional(const std::string& directive, std::string_view rest);
  void define(std::string_view rest, const LogicalLine& code);
  void scan_code(const LogicalLine& code);

  MacroModel model_;
  std::set<std::string, std::less<>> shimmed_;  // banned names #defined here
  std::vector<Frame> stack_;
  DarwinScan scan_;
};

Truth Scanner::truth(std::string_view condition) const {
  return evaluate_condition(condition, model_);
}

// Updates the block stack for #if and friends; false for other directives.
bool Scanner::conditional(const std::string& directive, std::string_view rest) {
  std::string condition(rest);
  if (directive == "ifdef" || directive == "elifdef") {
    condition = "defined(" + condition + ")";
  } else if (directive == "ifndef" || directive == "elifndef") {
    condition = "!defined(" + condition + ")";
  }
  if (directive == "if" || directive == "ifdef" || directive == "ifndef") {
    Truth t = truth(condition);
    stack_.push_back({live(), t == Truth::kTrue, live() && t != Truth::kFalse});
  } else if (directive.rfind("elif", 0) == 0 && !stack_.empty()) {
    Frame& frame = stack_.back();
    Truth t = truth(condition);
    frame.live = frame.parent_live && !frame.taken && t != Truth::kFalse;
    frame.taken = frame.taken || t == Truth::kTrue;
  } else if (directive == "else" && !stack_.empty()) {
    Frame& frame = stack_.back();
    frame.live = frame.parent_live && !frame.taken;
    frame.taken = true;
  } else if (directive == "endif") {
    if (!stack_.empty()) stack_.pop_back();
  } else {
    return false;
  }
  return true;
}

// `#define NAME ...`: a shim that defines a banned name makes later uses of
// it fine; any other banned name in the definition is a use.
void Scanner::define(std::string_view rest, const LogicalLine& code) {
  std::vector<std::string_view> names = identifiers(rest);
  if (!names.empty() && is_banned_name(names[0])) {
    shimmed_.insert(std::string(names[0]));
  }
  scan_code(code);
}

void Scanner::scan_code(const LogicalLine& code) {
  std::set<std::string_view> seen;
  for (std::string_view name : identifiers(code.text)) {
    if (is_banned_name(name) && shimmed_.count(name) == 0 &&
        seen.insert(name).second) {
      scan_.findings.push_back({code.line, std::string(name), false});
    }
  }
}

DarwinScan Scanner::run(std::string_view text) {
  model_ = darwin_model();
  model_.undefined = [this](std::string_view name) {
    return shimmed_.count(name) == 0 && darwin_model().undefined(name);
  };
  StrippedText stripped = strip(text);
  std::vector<LogicalLine> lines = logical_lines(stripped.without_comments);
  std::vector<LogicalLine> code = logical_lines(stripped.code);
  for (size_t i = 0; i < lines.size() && i < code.size(); ++i) {
    std::string_view rest;
    std::string directive = directive_of(lines[i].text, &rest);
    if (conditional(directive, rest) || !live()) continue;
    if (std::optional<IncludeDirective> include = parse_include(lines[i])) {
      if (is_banned_header(include->name)) {
        scan_.findings.push_back(
            {include->line, "<" + include->name + ">", true});
      }
      scan_.live_includes.push_back(std::move(*include));
    } else if (directive == "define") {
      define(rest, code[i]);
    } else if (directive.empty()) {
      scan_code(code[i]);
    }
  }
  return std::move(scan_);
}

}  // namespace

bool is_banned_name(std::string_view identifier) {
  for (std::string_view name : kBannedNames) {
    if (identifier == name) return true;
  }
  for (std::string_view prefix : kBannedPrefixes) {
    if (identifier.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool is_banned_header(std::string_view header) {
  if (header.rfind("linux/", 0) == 0) return true;
  for (std::string_view banned : kBannedHeaders) {
    if (header == banned) return true;
  }
  return false;
}

const MacroModel& darwin_model() {
  static const MacroModel* model = new MacroModel{
      {{"__APPLE__", 1}, {"__MACH__", 1}},
      [](std::string_view name) {
        for (std::string_view linux_macro : kLinuxMacros) {
          if (name == linux_macro) return true;
        }
        return is_banned_name(name);
      },
      [](std::string_view header) { return is_banned_header(header); }};
  return *model;
}

DarwinScan scan_for_darwin(std::string_view text) {
  return Scanner().run(text);
}

std::string darwin_message(const DarwinFinding& finding) {
  std::string guard;
  if (finding.is_header) {
    guard = "#if __has_include(" + finding.what + ") / #if defined(__linux__)";
  } else if (finding.what.find_first_of("abcdefghijklmnopqrstuvwxyz") ==
             std::string::npos) {
    guard = "#ifdef " + finding.what + " / #if defined(__linux__)";
  } else {
    guard = "#if defined(__linux__)";
  }
  return finding.what + " is not on macOS; guard it (" + guard +
         ") or mark the target WEFT_LINUX_ONLY";
}

}  // namespace weft::tools::include_check
