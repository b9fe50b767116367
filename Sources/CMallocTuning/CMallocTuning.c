#include <malloc.h>

#include "CMallocTuning.h"

int myeline_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

int myeline_limit_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}
