#include "tools/weft-bench/weft_bench_args.h"

#include <utility>

#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fabric/absl_compat.h"
#include "tools/cli/flag_scope.h"

namespace weft::bench {
namespace {

struct ShortOption {
  char letter;
  std::string_view flag;
};
// nccl-tests' options weft-bench implements, and their long flags.
constexpr ShortOption kShortOptions[] = {
    {'b', "minbytes"},   {'e', "maxbytes"}, {'i', "stepbytes"},
    {'f', "stepfactor"}, {'n', "iters"},    {'w', "warmup_iters"},
    {'c', "check"},      {'o', "redop"},    {'d', "datatype"},
    {'r', "root"}};
// nccl-tests' options that concern GPUs, threads or CUDA.
constexpr std::string_view kIgnoredLetters = "tgmNpzyTGCaR";

// Type names nccl-tests accepts for -d, as weft's; the first three are
// also the names its table prints.
constexpr std::pair<std::string_view, std::string_view> kTypeNames[] = {
    {"float", "float32"}, {"half", "float16"}, {"double", "float64"},
    {"int", "int32"},     {"char", "int8"},    {"bf16", "bfloat16"}};
constexpr size_t kPrintedTypeNames = 3;

// "--flag-name=v" as "--flag_name=v"; InvalidArgument for an unknown flag.
absl::StatusOr<std::string> long_flag(const std::string& arg) {
  const size_t eq = arg.find('=');
  std::string name =
      arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  const bool known = absl::FindCommandLineFlag(name) != nullptr ||
                     sim::cli::is_builtin_flag(name) ||
                     (name.rfind("no", 0) == 0 &&
                      absl::FindCommandLineFlag(name.substr(2)) != nullptr);
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag --", name, " (see weft-bench --help)"));
  }
  return absl::StrCat("--", name,
                      eq == std::string::npos ? "" : arg.substr(eq));
}

// "-b 8", "-b8" or "-b=8" (the value may be the next argument, consumed
// through *next) as "--minbytes=8".
absl::StatusOr<std::string> short_option(const std::string& arg, int argc,
                                         char** argv, int* next) {
  const char letter = arg[1];
  if (letter == 'h' && arg.size() == 2) return std::string("--help");
  if (kIgnoredLetters.find(letter) != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nccl-tests option -", std::string(1, letter),
        " (GPUs, threads, CUDA) has no meaning for weft-bench; see "
        "weft-bench --help"));
  }
  for (const ShortOption& o : kShortOptions) {
    if (o.letter != letter) continue;
    std::string value = arg.substr(2);
    if (!value.empty() && value[0] == '=') value = value.substr(1);
    if (value.empty()) {
      if (*next >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("option -", std::string(1, letter), " needs a value"));
      }
      value = argv[(*next)++];
    }
    return absl::StrCat("--", to_absl(o.flag), "=", value);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown option ", arg, " (see weft-bench --help)"));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> translate_args(int argc, char** argv) {
  std::vector<std::string> out;
  if (argc > 0) out.emplace_back(argv[0]);
  int i = 1;
  while (i < argc) {
    const std::string arg = argv[i++];
    absl::StatusOr<std::string> translated = arg;
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      translated = long_flag(arg);
    } else if (arg.size() >= 2 && arg[0] == '-') {
      translated = short_option(arg, argc, argv, &i);
    }
    if (!translated.ok()) return translated.status();
    out.push_back(*std::move(translated));
  }
  return out;
}

std::string_view weft_dtype_name(std::string_view nccl_name) {
  for (const auto& [nccl, weft] : kTypeNames) {
    if (nccl == nccl_name) return weft;
  }
  return nccl_name;
}

std::string_view nccl_type_name(std::string_view weft_name) {
  for (size_t i = 0; i < kPrintedTypeNames; ++i) {
    if (kTypeNames[i].second == weft_name) return kTypeNames[i].first;
  }
  return weft_name;
}

}  // namespace weft::bench
