#include "tools/cli/cli_common.h"

#include <cstdio>
#include <utility>

#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "fabric/absl_compat.h"
#include "tools/cli/flag_scope.h"

namespace weft::sim::cli {

int bad_input(std::string_view what) {
  std::string line(what);
  for (char& c : line) {
    if (c == '\n') c = ' ';  // one line, always
  }
  std::fprintf(stderr, "weft-sim: %s\n", line.c_str());
  return kExitBadInput;
}

int bad_input(const absl::Status& status) {
  return bad_input(to_std(status.message()));
}

absl::StatusOr<bool> parse_on_off(std::string_view flag,
                                  std::string_view text) {
  if (text != "on" && text != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", to_absl(flag), "=", to_absl(text), " is neither on nor off"));
  }
  return text == "on";
}

absl::StatusOr<uint64_t> parse_uint(std::string_view flag,
                                    std::string_view text, uint64_t min,
                                    uint64_t max) {
  uint64_t value = 0;
  if (!absl::SimpleAtoi(to_absl(text), &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s is not a whole number in %u..%u", flag, text, min, max));
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> normalise_flags(int argc,
                                                         char** argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i == 0 || arg.size() < 3 || arg.rfind("--", 0) != 0) {
      out.push_back(std::move(arg));
      continue;
    }
    const size_t eq = arg.find('=');
    std::string name =
        arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    for (char& c : name) {
      if (c == '-') c = '_';
    }
    const bool negated =
        name.rfind("no", 0) == 0 && absl::FindCommandLineFlag(name) == nullptr;
    const std::string lookup = negated ? name.substr(2) : name;
    if (absl::FindCommandLineFlag(lookup) == nullptr &&
        !is_builtin_flag(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", name, " (see weft-sim <command> --help)"));
    }
    out.push_back(absl::StrCat("--", name,
                               eq == std::string::npos ? "" : arg.substr(eq)));
  }
  return out;
}

absl::Status parse_flags(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> rest =
      absl::ParseCommandLine(static_cast<int>(args.size()), argv.data());
  if (rest.size() > 1) {
    std::vector<std::string> extra(rest.begin() + 1, rest.end());
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument(s) ", absl::StrJoin(extra, " "),
                     " (flags are --name=value)"));
  }
  return absl::OkStatus();
}

}  // namespace weft::sim::cli
