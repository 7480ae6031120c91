#include "fuzz_driver.h"

// Weak, so that a build without -sanitize=fuzzer links (the entry point is then null and the
// program only replays files). A weak reference does not pull the archive member in, so the
// fuzzing build asks for it with `-Xlinker -u -Xlinker LLVMFuzzerRunDriver` (scripts/fuzz.sh).
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, gh_fuzz_callback callback) __attribute__((weak));

int gh_fuzz_has_driver(void) { return LLVMFuzzerRunDriver != 0; }

int gh_fuzz_run_driver(int argc, char **argv, gh_fuzz_callback callback) {
    if (!LLVMFuzzerRunDriver) return -1;
    return LLVMFuzzerRunDriver(&argc, &argv, callback);
}
