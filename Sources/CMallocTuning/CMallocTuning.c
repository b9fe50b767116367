#include <malloc.h>

#include "CMallocTuning.h"

int myeline_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
