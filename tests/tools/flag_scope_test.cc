// FlagSet and the scope check (tools/cli/flag_scope.h), in process: a flag
// of another command's set is refused with a message naming the command, a
// flag of an accepted set and absl's own flags pass, membership follows
// the flag objects a set was built from (two flags of this one file sit in
// different sets; a set here holds a world flag defined elsewhere), and
// --help lists each set's flags with their help and defaults.
#include "tools/cli/flag_scope.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "base/absl_compat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/cli/world_flags.h"

ABSL_FLAG(std::string, scope_test_alpha, "a", "alpha's help");
ABSL_FLAG(int, scope_test_beta, 7, "beta's help");
ABSL_FLAG(bool, scope_test_gamma, false,
          "gamma's help, long enough to wrap: it goes on and on past the "
          "eightieth column of the terminal");

ABSL_DECLARE_FLAG(std::string, ranks);  // tools/cli/world_flags.cc

namespace weft::tools::cli {
namespace {

using ::testing::HasSubstr;

// Alpha and beta are defined side by side above, in different sets; mixed
// holds alpha and a flag defined in another file.
const FlagSet kAlphaSet("alpha", "the first", FLAGS_scope_test_alpha,
                        FLAGS_scope_test_gamma);
const FlagSet kBetaSet("beta", "the second", FLAGS_scope_test_beta,
                       FLAGS_scope_test_gamma);
const FlagSet kMixedSet("mixed", "from two files", FLAGS_scope_test_alpha,
                        FLAGS_ranks);
constexpr const FlagSet* kAllSets[] = {&kAlphaSet, &kBetaSet, &kMixedSet,
                                       &kWorldFlags};

absl::Status check(const std::vector<std::string>& flags,
                   std::vector<const FlagSet*> accepted) {
  std::vector<std::string> args = {"tool"};
  args.insert(args.end(), flags.begin(), flags.end());
  return check_flag_scope(args, {"tool", "cmd", accepted, kAllSets});
}

const absl::CommandLineFlag& flag(std::string_view name) {
  const absl::CommandLineFlag* f =
      absl::FindCommandLineFlag(base::to_absl(name));
  EXPECT_NE(f, nullptr) << name;
  return *f;
}

TEST(FlagSet, HoldsTheFlagsItWasBuiltFrom) {
  EXPECT_EQ(kAlphaSet.name(), "alpha");
  ASSERT_EQ(kAlphaSet.flags().size(), 2u);
  EXPECT_EQ(kAlphaSet.flags()[0]->Name(), "scope_test_alpha");
  EXPECT_TRUE(kAlphaSet.contains(flag("scope_test_alpha")));
  EXPECT_TRUE(kAlphaSet.contains(flag("scope_test_gamma")));
  EXPECT_FALSE(kAlphaSet.contains(flag("scope_test_beta")));
  EXPECT_TRUE(kMixedSet.contains(flag("ranks")));
  EXPECT_TRUE(kWorldFlags.contains(flag("ranks")));
  EXPECT_FALSE(kWorldFlags.contains(flag("scope_test_alpha")));
}

TEST(CheckFlagScope, RefusesAFlagOfAnotherSetNamingTheCommand) {
  const absl::Status s = check({"--scope_test_beta=2"}, {&kAlphaSet});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(),
            "--scope_test_beta=2 is not a flag of tool cmd (it belongs to "
            "another command; see tool --help)");
}

TEST(CheckFlagScope, AcceptsTheFlagsOfEveryAcceptedSet) {
  EXPECT_TRUE(check({"--scope_test_alpha=x"}, {&kAlphaSet}).ok());
  EXPECT_TRUE(
      check({"--scope_test_gamma", "--noscope_test_gamma"}, {&kBetaSet}).ok());
  EXPECT_TRUE(check({"--scope_test_alpha=x", "--scope_test_beta=1"},
                    {&kAlphaSet, &kBetaSet})
                  .ok());
  EXPECT_TRUE(check({"positional", "--ranks=4"}, {&kWorldFlags}).ok());
}

TEST(CheckFlagScope, MembershipFollowsTheSetsNotTheDefiningFile) {
  // Alpha and beta share a file but not a set.
  EXPECT_FALSE(check({"--scope_test_alpha=x"}, {&kBetaSet}).ok());
  EXPECT_FALSE(check({"--scope_test_beta=1"}, {&kAlphaSet}).ok());
  // --ranks is defined in world_flags.cc, alpha here: mixed takes both.
  EXPECT_TRUE(check({"--ranks=4", "--scope_test_alpha=x"}, {&kMixedSet}).ok());
  EXPECT_FALSE(check({"--ranks=4"}, {&kAlphaSet}).ok());
  EXPECT_FALSE(check({"--scope_test_alpha=x"}, {&kWorldFlags}).ok());
  // The first refused flag is the one named.
  const absl::Status s =
      check({"--ranks=4", "--scope_test_beta=3"}, {&kWorldFlags});
  EXPECT_THAT(std::string(s.message()), HasSubstr("--scope_test_beta=3"));
}

TEST(CheckFlagScope, AllowsAbslsOwnFlags) {
  // --flagfile is a flag object of absl's, in none of the sets; --help and
  // friends are names absl answers without one.
  ASSERT_NE(absl::FindCommandLineFlag("flagfile"), nullptr);
  EXPECT_TRUE(check({"--flagfile=/dev/null", "--help", "--helpfull",
                     "--version", "--undefok=x"},
                    {&kAlphaSet})
                  .ok());
  EXPECT_TRUE(is_builtin_flag("help"));
  EXPECT_TRUE(is_builtin_flag("flagfile"));
  EXPECT_FALSE(is_builtin_flag("scope_test_alpha"));
}

TEST(FlagName, StripsDashesValueAndBooleanNo) {
  EXPECT_EQ(flag_name("--scope_test_alpha=x"), "scope_test_alpha");
  EXPECT_EQ(flag_name("--noscope_test_gamma"), "scope_test_gamma");
  EXPECT_EQ(flag_name("positional"), "");
}

TEST(WantsHelp, OnlyHelpAndHelpshort) {
  using Args = std::vector<std::string>;
  EXPECT_TRUE(wants_help(Args{"tool", "--ranks=4", "--help"}));
  EXPECT_TRUE(wants_help(Args{"tool", "--helpshort"}));
  EXPECT_FALSE(wants_help(Args{"--help"}));  // argv[0] is the program
  EXPECT_FALSE(wants_help(Args{"tool", "--helpfull"}));
  EXPECT_FALSE(wants_help(Args{"tool", "--help=ranks"}));
}

TEST(FlagsHelp, ListsEachSetsFlagsWithHelpAndDefault) {
  constexpr const FlagSet* kSets[] = {&kAlphaSet, &kBetaSet};
  const std::string used_by[] = {"cmd, other"};
  const std::string help = flags_help(kSets, used_by);
  EXPECT_THAT(help, HasSubstr("  alpha flags: the first (cmd, other):\n"
                              "    --scope_test_alpha (alpha's help); "
                              "default: \"a\";\n"));
  EXPECT_THAT(help, HasSubstr("  beta flags: the second:\n"
                              "    --scope_test_beta (beta's help); "
                              "default: 7;\n"
                              "    --scope_test_gamma (see alpha flags)\n"));
}

TEST(FlagsHelp, WrapsAtEightyColumns) {
  const std::string help = flag_help(flag("scope_test_gamma"));
  EXPECT_EQ(
      help,
      "    --scope_test_gamma (gamma's help, long enough to wrap: it "
      "goes on and on\n"
      "      past the eightieth column of the terminal); default: false;\n");
}

}  // namespace
}  // namespace weft::tools::cli
