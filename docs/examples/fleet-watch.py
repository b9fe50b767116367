#!/usr/bin/env python3
"""Prints a Myeline fleet as it changes: one line per device status and per activity envelope.

    python3 fleet-watch.py --host broker.example.net --ca ca.crt \
        --username aggregator --password-file board.password
    python3 fleet-watch.py --unix /run/mosquitto/fleet.sock

Anything on the topics that is not Myeline's (another shape of topic, an invalid id, not JSON,
another schema, a missing or mistyped key, absurd nesting) is skipped and counted, as the contract
says (docs/topics.md); the count is printed on Ctrl-C. Needs paho-mqtt (Debian: apt-get install
python3-paho-mqtt; or pip install paho-mqtt), 1.6 or 2.
"""
import argparse
import json
import re
import socket

import paho.mqtt.subscribe as subscribe

IDENTIFIER = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
skipped = 0


def myeline(payload, schema, keys):
    """The payload as a dict if it is a JSON object of `schema` with `keys` of the given types, else None."""
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to decode
        return None
    if not isinstance(value, dict) or value.get("schema") != schema:
        return None
    for key, kind in keys.items():
        if not isinstance(value.get(key), kind) or isinstance(value.get(key), bool) and kind is not bool:
            return None
    return value


def describe(levels, payload):
    """The line for a message on PREFIX/DEVICE/status or PREFIX/DEVICE/activities/ACTIVITY, or None."""
    if len(levels) == 2 and levels[1] == "status":
        status = myeline(payload, "myeline.status.v1", {"device": str, "state": str})
        if status is None or status["device"] != levels[0]:
            return None
        return f"{levels[0]} {status['state']}"
    if len(levels) != 3 or levels[1] != "activities" or not IDENTIFIER.match(levels[2]):
        return None
    if not payload:  # an empty retained message: the activity was dismissed
        return f"{levels[0]} {levels[2]} dismissed"
    number = (int, float)
    envelope = myeline(payload, "myeline.activity.v1", {
        "device": str, "activity": str, "event": str, "seq": int, "content-state": dict})
    if envelope is None or (envelope["device"], envelope["activity"]) != (levels[0], levels[2]):
        return None
    kind = envelope.get("attributes-type")
    if not isinstance(kind, str) or not IDENTIFIER.match(kind):
        return None
    state = envelope["content-state"]
    if kind != "location":  # a type this script does not know: shown as it is (docs/topics.md)
        fields = ", ".join(f"{key}={json.dumps(value)}" for key, value in sorted(state.items()))
        return f"{levels[0]} {levels[2]} {envelope['event']} seq {envelope['seq']}: {kind} {fields}"
    if not isinstance(state.get("distance"), number):
        return None
    where = "no location"
    if isinstance(state.get("latitude"), number) and isinstance(state.get("longitude"), number):
        where = f"{state['latitude']:.5f},{state['longitude']:.5f}"
    return f"{levels[0]} {levels[2]} {envelope['event']} seq {envelope['seq']}: {where}, {state['distance']:.0f} m"


def use_unix_socket(path):
    """paho-mqtt 1.6 (Debian 12) has no unix sockets: its connection becomes one to `path`."""
    def connect(address, timeout=None, source_address=None):
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(timeout)
        sock.connect(path)
        return sock
    socket.create_connection = connect


def main():
    global skipped
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, help="default: 8883 with --ca, else 1883")
    parser.add_argument("--unix", metavar="PATH", help="the broker's unix socket, instead of --host and --port")
    parser.add_argument("--ca", help="CA certificate (PEM) of the broker: connect with TLS")
    parser.add_argument("--username")
    parser.add_argument("--password-file", help="file whose first line is the password")
    parser.add_argument("--prefix", default="myeline")
    args = parser.parse_args()

    auth = None
    if args.username:
        with open(args.password_file, encoding="utf-8") as file:
            auth = {"username": args.username, "password": file.readline().rstrip("\n")}
    tls = {"ca_certs": args.ca} if args.ca else None
    port = args.port or (8883 if args.ca else 1883)
    depth = len(args.prefix.split("/"))
    if args.unix:
        use_unix_socket(args.unix)

    def on_message(client, userdata, message):
        global skipped
        levels = message.topic.split("/")[depth:]
        line = describe(levels, message.payload) if levels and IDENTIFIER.match(levels[0]) else None
        if line is None:
            skipped += 1  # not Myeline's: ignore it, as the contract says
            return
        print(line, flush=True)

    try:
        subscribe.callback(
            on_message,
            [f"{args.prefix}/+/status", f"{args.prefix}/+/activities/+"],
            qos=1,
            hostname=args.unix or args.host,
            port=port,
            auth=auth,
            tls=tls,
        )
    except KeyboardInterrupt:
        print(f"{skipped} messages skipped: not Myeline's", flush=True)


if __name__ == "__main__":
    main()
