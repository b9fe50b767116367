#!/usr/bin/env python3
"""Prints a Myeline fleet as it changes: one line per device status and per activity envelope.

    python3 fleet-watch.py --host broker.example.net --ca ca.crt \
        --username aggregator --password-file board.password

Needs paho-mqtt (Debian: apt-get install python3-paho-mqtt; or pip install paho-mqtt), 1.6 or 2.
"""
import argparse
import json

import paho.mqtt.subscribe as subscribe


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, help="default: 8883 with --ca, else 1883")
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

    def on_message(client, userdata, message):
        # PREFIX/DEVICE/status or PREFIX/DEVICE/activities/ACTIVITY (docs/topics.md).
        levels = message.topic.split("/")[depth:]
        device = levels[0]
        if not message.payload:  # an empty retained message: the activity was dismissed
            print(f"{device} {levels[-1]} dismissed", flush=True)
            return
        try:
            payload = json.loads(message.payload)
        except ValueError:
            return  # not Myeline's: ignore it, as the contract says
        if levels[1] == "status":
            print(f"{device} {payload['state']}", flush=True)
            return
        state = payload["content-state"]
        where = "no location"
        if "latitude" in state:
            where = f"{state['latitude']:.5f},{state['longitude']:.5f}"
        print(
            f"{device} {payload['activity']} {payload['event']} seq {payload['seq']}: "
            f"{where}, {state['distance']:.0f} m",
            flush=True,
        )

    subscribe.callback(
        on_message,
        [f"{args.prefix}/+/status", f"{args.prefix}/+/activities/+"],
        qos=1,
        hostname=args.host,
        port=port,
        auth=auth,
        tls=tls,
    )


if __name__ == "__main__":
    main()
