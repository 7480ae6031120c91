#ifndef GATEHOUSE_FUZZ_DRIVER_H
#define GATEHOUSE_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

typedef int (*gh_fuzz_callback)(const uint8_t *data, size_t size);

/// 1 when libFuzzer is linked in (a build with -sanitize=fuzzer), 0 otherwise.
int gh_fuzz_has_driver(void);

/// Runs libFuzzer's driver with these arguments (argv[0] is the program); only when linked in.
int gh_fuzz_run_driver(int argc, char **argv, gh_fuzz_callback callback);

#endif
