#ifndef MYELINE_CMOSQUITTO_SHIM_H
#define MYELINE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <sys/prctl.h>

/// Names the calling thread (at most 15 bytes), as top -H, perf and /proc show it: the network
/// thread that runs libmosquitto's loop. prctl is variadic, which Swift cannot call.
static inline void myeline_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}
#endif
