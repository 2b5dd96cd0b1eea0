// weft-bench's command line before absl parses it. nccl-tests takes short
// options (`-b 8 -e 128M -f 2 -w 5 -n 20 -c 1 -d float -o sum -r 0`);
// absl::flags are long-form only, so each short option is rewritten to its
// long flag first (`-b 8` and `-b8` become `--minbytes=8`), and nccl-tests'
// type names are mapped to weft's (float -> float32, half -> float16, ...).
// nccl-tests options that mean nothing here (-g, -t, -m, ...) are bad
// input with a message; long flags are then checked as every weft tool's
// are (tools/cli/flag_parse.h).
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_ARGS_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace weft::tools::weft_bench {

// argv rewritten for cli::set_flags() (argv[0] first): short options
// translated, then cli::check_args(). InvalidArgument for an
// unsupported or unknown option, a short option without its value, or any
// mistake check_args() finds.
absl::StatusOr<std::vector<std::string>> translate_args(int argc, char** argv);

// nccl-tests' type names ("float", "half", "double", "int", "char", ...) as
// weft's dtype names; other names are returned unchanged.
std::string_view weft_dtype_name(std::string_view nccl_name);
// weft's dtype names as nccl-tests prints them in its type column
// ("float32" -> "float", "float16" -> "half", "float64" -> "double");
// names nccl-tests lacks are returned unchanged.
std::string_view nccl_type_name(std::string_view weft_name);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_ARGS_H_
