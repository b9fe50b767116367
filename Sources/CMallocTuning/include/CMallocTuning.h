#ifndef MYELINE_CMALLOCTUNING_H
#define MYELINE_CMALLOCTUNING_H

/// Fixes glibc malloc's mmap threshold at `bytes` (mallopt(M_MMAP_THRESHOLD)), which also stops it
/// raising its trim threshold; returns 1 on success, 0 if glibc refused. In C because Swift's Glibc
/// module does not include <malloc.h>.
int myeline_fix_mmap_threshold(int bytes);

/// Caps the number of glibc malloc arenas at `count` (mallopt(M_ARENA_MAX)); returns 1 on success,
/// 0 if glibc refused.
int myeline_limit_arenas(int count);

#endif
