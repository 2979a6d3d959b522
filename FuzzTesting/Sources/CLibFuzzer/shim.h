#ifndef ROUTEKIT_CLIBFUZZER_SHIM_H
#define ROUTEKIT_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver (compiler-rt, LLVM 11 and later), linked in by -sanitize=fuzzer.
// FuzzGPXReader calls it from its own entry point; see FuzzGPXReader.swift.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
