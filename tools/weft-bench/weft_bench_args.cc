#include "tools/weft-bench/weft_bench_args.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/absl_compat.h"
#include "tools/cli/flag_parse.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::weft_bench {
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

// "-b 8", "-b8" or "-b=8" (the value may be the next argument, consumed
// through *next) as "--minbytes=8".
absl::StatusOr<std::string> short_option(const std::string& arg, int argc,
                                         char** argv, int* next) {
  const char letter = arg[1];
  if (letter == 'h' && arg.size() == 2) return std::string("--help");
  // absl's usage flags with one dash (-help, -helpfull, -version).
  const std::string word = arg.substr(1, arg.find('=') - 1);
  if (cli::is_builtin_flag(word)) return absl::StrCat("-", arg);
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
    return absl::StrCat("--", base::to_absl(o.flag), "=", value);
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
    if (arg.rfind("--", 0) != 0 && arg.size() >= 2 && arg[0] == '-') {
      translated = short_option(arg, argc, argv, &i);
    }
    if (!translated.ok()) return translated.status();
    out.push_back(*std::move(translated));
  }
  return cli::check_args("weft-bench", out);
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

}  // namespace weft::tools::weft_bench
