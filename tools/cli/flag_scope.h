// Which flags each command of a tool accepts. A tool is one binary holding
// the flags of all its commands, so absl accepts any of them anywhere. Each
// flag file groups its flags into FlagSets, built from the flag objects
// themselves (not from names or source paths, so moving a file changes
// nothing); each command lists the sets it accepts; check_flag_scope()
// refuses, as bad input, a flag of the tool that none of them holds
// (`weft-sim run --frames=10`) instead of silently ignoring it; and --help
// lists the flags set by set (flags_help()).
#ifndef WEFT_TOOLS_CLI_FLAG_SCOPE_H_
#define WEFT_TOOLS_CLI_FLAG_SCOPE_H_

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"

namespace weft::tools::cli {

// A named group of flags that commands accept together. A flag may be in
// more than one set (sweep reads p2p's --check_determinism). Trivially
// destructible, so a set can be a namespace-scope constant next to the
// ABSL_FLAG definitions it groups.
class FlagSet {
 public:
  static constexpr size_t kMaxFlags = 24;

  // `name` ("world") and `about` ("the simulated world") head the set in
  // --help.
  template <typename... T>
  FlagSet(std::string_view name, std::string_view about,
          const absl::Flag<T>&... flags)
      : name_(name),
        about_(about),
        size_(sizeof...(T)),
        flags_{&absl::GetFlagReflectionHandle(flags)...} {
    static_assert(sizeof...(T) <= kMaxFlags, "raise FlagSet::kMaxFlags");
  }

  std::string_view name() const { return name_; }
  std::string_view about() const { return about_; }
  std::span<const absl::CommandLineFlag* const> flags() const {
    return {flags_.data(), size_};
  }
  bool contains(const absl::CommandLineFlag& flag) const;
  // This set without the flag named `name`: for the --help of a tool that
  // refuses one flag of a shared set (weft-bench's --trace).
  FlagSet without(std::string_view name) const;

 private:
  std::string_view name_;
  std::string_view about_;
  size_t size_;
  std::array<const absl::CommandLineFlag*, kMaxFlags> flags_;
};

using FlagSets = std::span<const FlagSet* const>;

// One command of a tool and the sets it accepts, among all the tool's sets.
struct FlagScope {
  std::string_view program;  // "weft-sim"
  std::string_view command;  // "run"
  FlagSets accepted;
  FlagSets all;  // every set of every command of `program`
};

// The flag absl would look up for `arg` (normalised, "--name[=value]";
// "--nofoo" of a boolean --foo is "foo"), or "" for a positional argument.
std::string flag_name(const std::string& arg);

// True for the names absl::ParseCommandLine answers itself (usage and flag
// files: --help, --helpfull, --version, --flagfile, ...), some of which no
// flag object stands for.
bool is_builtin_flag(std::string_view name);

// InvalidArgument naming the first flag of `args` (normalised,
// "--name[=value]"; argv[0] first) that is in a set of `scope.all` but in
// none of `scope.accepted`. A flag in no set of the tool is absl's own
// (--flagfile, ...) and always allowed.
absl::Status check_flag_scope(std::span<const std::string> args,
                              const FlagScope& scope);

// True when `args` (normalised, argv[0] first) ask for --help or
// --helpshort, which the tool answers from its sets; absl answers its other
// usage flags (--helpfull, --help=substring, ...).
bool wants_help(std::span<const std::string> args);
// True when `args` (argv, argv[0] first) asks for --version.
bool wants_version(std::span<const std::string> args);
// What --version prints for `tool`: "weft-sim 0.1.0 (RelWithDebInfo build,
// GCC 12.2.0)", the version from project(VERSION), the build type and the
// compiler. The tools print it and exit 0.
std::string version_line(std::string_view tool);

// One flag as --help shows it, absl's way: "    --name (help); default:
// value;" wrapped at 80 columns.
std::string flag_help(const absl::CommandLineFlag& flag);

// `sets` as --help shows them: each set's name, what it is for and
// `used_by[i]` (e.g. "study, run, p2p"; none if `used_by` is shorter), then
// its flags. A flag an earlier set listed is named, not described again.
std::string flags_help(FlagSets sets, std::span<const std::string> used_by);

}  // namespace weft::tools::cli

#endif  // WEFT_TOOLS_CLI_FLAG_SCOPE_H_
