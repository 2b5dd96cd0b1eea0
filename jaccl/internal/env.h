// JACCL's environment: each setting has a JACCL_ name and an MLX_ name, and
// the JACCL_ one wins when both are set (JACCL does not complain; weft
// prints a warning when they differ).
#ifndef WEFT_JACCL_INTERNAL_ENV_H_
#define WEFT_JACCL_INTERNAL_ENV_H_

#include "rendezvous/config.h"

namespace jaccl::internal {

// The process environment, except that an MLX_ name of a pair reads as its
// JACCL_ name when that is set: weft::Config then sees one value for both,
// JACCL's, instead of refusing a disagreement.
weft::EnvLookup jaccl_env(const weft::EnvLookup& getenv = ::getenv);

// One line on stderr for each pair whose two names are set to different
// values, naming both and the one used.
void warn_about_disagreements(const weft::EnvLookup& getenv = ::getenv);

// The value of a JACCL setting (JACCL_ name first, then MLX_), or nullptr.
const char* lookup(const weft::EnvLookup& getenv, const char* jaccl_name);

}  // namespace jaccl::internal

#endif  // WEFT_JACCL_INTERNAL_ENV_H_
