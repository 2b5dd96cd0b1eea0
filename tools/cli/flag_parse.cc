#include "tools/cli/flag_parse.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"
#include "base/text_file.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::cli {
namespace {

// A flag file may name another; deeper than this is a file naming itself.
constexpr int kMaxFlagfileDepth = 8;
constexpr size_t kMaxFlagfileLines = 10'000;
constexpr size_t kMaxFlagfileBytes = size_t{1} << 20;

// One "-name[=value]" or "--name[=value]" argument, the name with - as _.
struct FlagArg {
  std::string name;
  std::optional<std::string> value;
};

FlagArg split_flag(const std::string& arg) {
  const size_t start = arg.rfind("--", 0) == 0 ? 2 : 1;
  const size_t eq = arg.find('=');
  FlagArg out;
  out.name = arg.substr(start, eq == std::string::npos ? eq : eq - start);
  for (char& c : out.name) {
    if (c == '-') c = '_';
  }
  if (eq != std::string::npos) out.value = arg.substr(eq + 1);
  return out;
}

// The flag `name` stands for: the flag of that name, or for "--nofoo" the
// boolean --foo (negated); nullptr flag when the tool has neither.
struct Resolved {
  absl::CommandLineFlag* flag = nullptr;
  bool negated = false;
};

Resolved resolve(const std::string& name) {
  if (absl::CommandLineFlag* f = absl::FindCommandLineFlag(name)) {
    return {f, false};
  }
  if (name.rfind("no", 0) == 0) {
    if (absl::CommandLineFlag* f = absl::FindCommandLineFlag(name.substr(2))) {
      return {f, true};
    }
  }
  return {};
}

std::vector<std::string> split_list(const std::string& value) {
  return absl::StrSplit(value, ',', absl::SkipEmpty());
}

// Collects what check_args() returns, one argument list (argv, a flag file)
// at a time.
class ArgChecker {
 public:
  ArgChecker(std::string_view program, std::span<const std::string> args)
      : program_(program) {
    for (const std::string& arg : args) {
      if (arg.size() < 2 || arg[0] != '-') continue;
      const FlagArg f = split_flag(arg);
      if (f.name == "undefok" && f.value) {
        for (std::string& n : split_list(*f.value)) undefok_.push_back(n);
      }
    }
  }

  absl::Status add_list(std::span<const std::string> list, int depth);
  std::vector<std::string> take() { return std::move(out_); }

 private:
  absl::Status add_flag(const FlagArg& arg, int depth);
  absl::Status add_value_flag(absl::CommandLineFlag& flag,
                              const std::string& value);
  absl::Status add_flagfile(const std::string& path, int depth);
  absl::Status add_from_env(const std::string& names, bool required, int depth);
  bool undefined_ok(const std::string& name) const;
  std::string see_help() const {
    return absl::StrCat("see ", base::to_absl(program_), " --help");
  }

  std::string_view program_;
  std::vector<std::string> undefok_;
  std::vector<std::string> out_;
};

bool ArgChecker::undefined_ok(const std::string& name) const {
  for (const std::string& n : undefok_) {
    if (n == name || absl::StrCat("no", n) == name) return true;
  }
  return false;
}

absl::Status ArgChecker::add_list(std::span<const std::string> list,
                                  int depth) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& arg = list[i];
    const size_t rest = arg == "--" ? i + 1 : i;
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") {
      if (rest == list.size()) continue;  // a "--" with nothing after it
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", list[rest],
                       "\" (flags are --name=value; ", see_help(), ")"));
    }
    FlagArg f = split_flag(arg);
    const Resolved r = resolve(f.name);
    const bool needs_value = r.flag != nullptr && !r.negated &&
                             !r.flag->IsOfType<bool>() && !f.value;
    if (needs_value) {
      if (i + 1 == list.size() || list[i + 1].rfind("--", 0) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", f.name, " needs a value: --", f.name, "=VALUE (",
                         see_help(), ")"));
      }
      f.value = list[++i];
    }
    if (absl::Status s = add_flag(f, depth); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ArgChecker::add_flag(const FlagArg& arg, int depth) {
  const std::string& name = arg.name;
  if (name == "flagfile" || name == "fromenv" || name == "tryfromenv") {
    const std::string value = arg.value.value_or("");
    if (name != "flagfile")
      return add_from_env(value, name == "fromenv", depth);
    for (const std::string& path : split_list(value)) {
      if (absl::Status s = add_flagfile(path, depth); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (name == "undefok") return absl::OkStatus();  // read by the constructor
  if (name == "h" && !arg.value && resolve(name).flag == nullptr) {
    out_.push_back("--help");  // -h, as most tools take it
    return absl::OkStatus();
  }
  if (is_builtin_flag(name)) {                     // usage flags absl answers
    out_.push_back(
        absl::StrCat("--", name, arg.value ? "=" : "", arg.value.value_or("")));
    return absl::OkStatus();
  }
  const Resolved r = resolve(name);
  if (r.flag == nullptr) {
    if (undefined_ok(name)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag --", name, " (", see_help(), ")"));
  }
  const std::string base(base::to_std(r.flag->Name()));
  if (r.negated && !r.flag->IsOfType<bool>()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": only a true/false flag has a --no form; ",
                     "give --", base, " a value (", see_help(), ")"));
  }
  if (r.negated && arg.value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, "=", *arg.value, ": the --no form takes no value; write --",
        base, "=false or --", name));
  }
  if (r.negated || !arg.value) {  // a boolean alone: true, or --no: false
    out_.push_back(absl::StrCat("--", name));
    return absl::OkStatus();
  }
  return add_value_flag(*r.flag, *arg.value);
}

absl::Status ArgChecker::add_value_flag(absl::CommandLineFlag& flag,
                                        const std::string& value) {
  const std::string name(base::to_std(flag.Name()));
  // ParseFrom() is the check absl itself would make; put the value back, so
  // that checking sets nothing.
  const std::string before = flag.CurrentValue();
  std::string error;
  const bool parsed = flag.ParseFrom(value, &error);
  std::string ignored;
  if (parsed) flag.ParseFrom(before, &ignored);
  if (!parsed && flag.IsOfType<bool>()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", value, " is neither true nor false (--",
                     name, " alone means true, --no", name, " false)"));
  }
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, "=", value, ": ", error, " (", see_help(), ")"));
  }
  out_.push_back(absl::StrCat("--", name, "=", value));
  return absl::OkStatus();
}

absl::Status ArgChecker::add_flagfile(const std::string& path, int depth) {
  if (depth >= kMaxFlagfileDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("--flagfile=", path, ": flag files nested more than ",
                     kMaxFlagfileDepth, " deep; does one name itself?"));
  }
  absl::StatusOr<std::string> text =
      base::read_text_file(path, kMaxFlagfileBytes, "flag file");
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--flagfile=", path, ": ", text.status().message()));
  }
  std::istringstream lines_in(*text);
  std::vector<std::string> lines;
  size_t number = 0;
  for (std::string line; std::getline(lines_in, line);) {
    if (++number > kMaxFlagfileLines) {
      return absl::InvalidArgumentError(
          absl::StrCat("--flagfile=", path, " has more than ",
                       kMaxFlagfileLines, " lines; is it a flag file?"));
    }
    const std::string text(absl::StripAsciiWhitespace(line));
    if (text.empty() || text[0] == '#') continue;
    if (text[0] != '-') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--flagfile=", path, " line ", number, ": \"", text,
          "\" is not a flag (one --name=value per line, # for comments)"));
    }
    lines.push_back(text);
  }
  return add_list(lines, depth + 1);
}

absl::Status ArgChecker::add_from_env(const std::string& names, bool required,
                                      int depth) {
  std::vector<std::string> flags;
  for (const std::string& name : split_list(names)) {
    const std::string variable = absl::StrCat("FLAGS_", name);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr && required) {
      return absl::InvalidArgumentError(
          absl::StrCat("--fromenv=", names, ": ", variable,
                       " is not set; set it or use --tryfromenv"));
    }
    if (value != nullptr) flags.push_back(absl::StrCat("--", name, "=", value));
  }
  return add_list(flags, depth + 1);
}

// absl's usage output groups flags by the file that defines them; show
// "weft" instead of the build machine's path, and absl's files from absl/.
constexpr char kWeftFlagsFile[] = "weft";
std::string usage_file_name(absl::string_view path) {
  const size_t absl_dir = path.rfind("absl/");
  if (absl_dir != absl::string_view::npos) {
    return std::string(path.substr(absl_dir));
  }
  return kWeftFlagsFile;
}

// --helpfull: every flag the program has, grouped by the file that defines
// it (usage_file_name): weft's first, then Abseil's files in name order,
// flags in name order, in the layout of absl's own listing, from absl's
// public reflection API.
std::string full_help(std::string_view program) {
  std::map<std::string, std::map<std::string, const absl::CommandLineFlag*>>
      by_file;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->IsRetired()) continue;
    by_file[usage_file_name(flag->Filename())][std::string(name)] = flag;
  }
  std::string out = absl::StrCat(base::to_absl(program), ": ",
                                 absl::ProgramUsageMessage(), "\n");
  auto list = [&out](const std::string& file, const auto& flags) {
    absl::StrAppend(&out, "\n  Flags from ", file, ":\n");
    for (const auto& [name, flag] : flags) out += flag_help(*flag);
  };
  if (auto weft = by_file.find(kWeftFlagsFile); weft != by_file.end()) {
    list(weft->first, weft->second);
  }
  for (const auto& [file, flags] : by_file) {
    if (file != kWeftFlagsFile) list(file, flags);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> check_args(
    std::string_view program, std::span<const std::string> args) {
  ArgChecker checker(program, args);
  std::vector<std::string> out;
  if (!args.empty()) out.push_back(args[0]);
  if (args.size() > 1) {
    if (absl::Status s = checker.add_list(args.subspan(1), 0); !s.ok())
      return s;
  }
  for (std::string& a : checker.take()) out.push_back(std::move(a));
  return out;
}

void set_flags(std::vector<std::string> args) {
  absl::FlagsUsageConfig config;
  config.normalize_filename = usage_file_name;
  absl::SetFlagsUsageConfig(config);
  // --helpfull lists every flag and exits, 0 as weft's --help does (absl
  // 20220623 exits 1 after help; later releases 0).
  for (const std::string& a : args) {
    if (a != "--helpfull") continue;
    const std::string& path = args[0];
    std::cout << full_help(path.substr(path.rfind('/') + 1));
    std::cout.flush();
    std::exit(kExitOk);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  absl::ParseCommandLine(static_cast<int>(args.size()), argv.data());
}

}  // namespace weft::tools::cli
