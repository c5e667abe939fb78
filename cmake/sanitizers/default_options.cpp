// Default options of the sanitizer build (DEVSHIM_SANITIZE=ON, build-asan; docs/architecture.md).
//
// Compiled into every instrumented executable (the tests, runner, devshim-probe, ...), so that they
// hold however the program starts: under ctest, under gtest_discover_tests at build time, by hand,
// or as a child of the runner. ASAN_OPTIONS / UBSAN_OPTIONS in the environment still override them
// one by one.
//
//   halt_on_error=1       the first report ends the program (UBSan: also -fno-sanitize-recover)
//   exitcode=86           ... with this exit code, which devshim never uses (0, 1, 2, 70, 130):
//                         a test that expects the runner to exit 1 ("a test failed") then sees
//                         the report rather than passing
//   detect_leaks=1        LeakSanitizer at exit (the default on x86-64 Linux, made explicit)
//   check_initialization_order=1, strict_init_order=1   static initialisation order bugs
//   print_stacktrace=1    UBSan reports come with the stack

extern "C" {

// The sanitizer runtimes look these up by name (weak symbols of libasan and libubsan).
// NOLINTBEGIN(bugprone-reserved-identifier)
const char* __asan_default_options() {
  return "halt_on_error=1:exitcode=86:detect_leaks=1:check_initialization_order=1"
         ":strict_init_order=1";
}

const char* __ubsan_default_options() { return "halt_on_error=1:exitcode=86:print_stacktrace=1"; }
// NOLINTEND(bugprone-reserved-identifier)

}  // extern "C"
