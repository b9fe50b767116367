#ifndef MYELINE_CLIBFUZZER_H
#define MYELINE_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, FuzzerInterface.h): parses libFuzzer's flags from argv and
/// fuzzes `callback`. SwiftPM renames an executable's `main`, so each fuzz target's own `main`
/// calls this instead of libFuzzer's `main`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
