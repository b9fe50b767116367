// CLibFuzzer only declares libFuzzer's driver, which -sanitize=fuzzer links; SwiftPM needs a source file.
#include "CLibFuzzer.h"
