#ifndef MYELINE_CTHREADNAME_H
#define MYELINE_CTHREADNAME_H

/// Names the calling thread, as top -H, perf and /proc/PID/task/TID/comm show it; Linux keeps the
/// first 15 bytes. Returns 0, or an error number (ERANGE for a name too long). In C because glibc
/// declares pthread_setname_np only with _GNU_SOURCE, which Swift's Glibc module does not define,
/// and Foundation's Thread.name does not reach the kernel on Linux.
int myeline_name_current_thread(const char *name);

#endif
