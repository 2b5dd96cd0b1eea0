// WEFT_ASSERT: assertions of invariants and preconditions that are checked in
// Debug and sanitizer builds and compiled out of release builds.
//
//   WEFT_ASSERT(free_slots_ <= depth_, "more free slots than slots");
//
// On failure it prints the condition, the message, file and line to stderr
// and aborts (a broken invariant is a bug in weft, never bad input: bad input
// gets a typed absl::Status). Whether checks are on is decided by the build:
// WEFT_CHECK_INVARIANTS=1 is defined for CMake's Debug configuration, which
// the debug, asan and tsan presets use; release builds (Release,
// RelWithDebInfo) leave it undefined. The condition is still compiled (and so
// kept correct) when checks are off, but never evaluated.
//
// A class whose comments state invariants has a `void check_invariants()
// const` that WEFT_ASSERTs each of them, called through
// WEFT_CHECK_INVARIANTS_OF(*this) after every mutating call: free in release.
#ifndef WEFT_FABRIC_ASSERT_H_
#define WEFT_FABRIC_ASSERT_H_

namespace weft::fabric::internal {

// Prints the failed assertion and aborts.
[[noreturn]] void assertion_failed(const char* condition, const char* message,
                                   const char* file, int line);

}  // namespace weft::fabric::internal

#if defined(WEFT_CHECK_INVARIANTS) && WEFT_CHECK_INVARIANTS
namespace weft {
// Whether this build checks WEFT_ASSERTs and invariants.
inline constexpr bool kChecksInvariants = true;
}  // namespace weft
#define WEFT_ASSERT(condition, message)                                 \
  do {                                                                  \
    if (!(condition)) {                                                 \
      ::weft::fabric::internal::assertion_failed(#condition, (message), \
                                                 __FILE__, __LINE__);   \
    }                                                                   \
  } while (false)
#else
namespace weft {
inline constexpr bool kChecksInvariants = false;
}  // namespace weft
#define WEFT_ASSERT(condition, message)                      \
  do {                                                       \
    static_cast<void>(sizeof(static_cast<bool>(condition))); \
    static_cast<void>(sizeof(message));                      \
  } while (false)
#endif

// Runs object.check_invariants() where checks are on.
#define WEFT_CHECK_INVARIANTS_OF(object)       \
  do {                                         \
    if constexpr (::weft::kChecksInvariants) { \
      (object).check_invariants();             \
    }                                          \
  } while (false)

#endif  // WEFT_FABRIC_ASSERT_H_
