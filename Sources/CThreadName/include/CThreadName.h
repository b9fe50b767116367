#ifndef MYELINE_CTHREADNAME_H
#define MYELINE_CTHREADNAME_H

/// Names the calling thread, as top -H, perf and /proc/PID/task/TID/comm show it: the first 15
/// bytes of `name`. Returns 0, or pthread_setname_np's error number. In C because glibc declares
/// pthread_setname_np only with _GNU_SOURCE, which Swift's Glibc module does not define, and
/// Foundation's Thread.name does not reach the kernel on Linux.
int myeline_name_current_thread(const char *name);

#endif
