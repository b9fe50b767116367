#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "CThreadName.h"

int myeline_name_current_thread(const char *name) {
    // The kernel takes at most 15 bytes and a NUL; a longer name is cut rather than refused.
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}
