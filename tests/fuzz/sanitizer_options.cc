// Linked into every fuzz target: undefined behaviour found while fuzzing
// must stop the run like a crash (libFuzzer then keeps the input), not
// scroll past as a recoverable report. ASan already stops on its own.
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}
