#ifndef MYELINE_CMOSQUITTO_SHIM_H
#define MYELINE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
