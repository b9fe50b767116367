#!/usr/bin/env python3
"""Publishes N retained location envelopes (devices dev-0 ... dev-N-1) to a mosquitto unix socket
with a bare MQTT 3.1.1 client (no dependencies), for scripts/benchmark-aggregator."""
import json, socket, sys

def packet(kind, body):
    length, encoded = len(body), bytearray()
    while True:
        byte, length = length % 128, length // 128
        encoded.append(byte | (0x80 if length else 0))
        if not length:
            return bytes([kind]) + bytes(encoded) + body

def string(text):
    data = text.encode()
    return len(data).to_bytes(2, "big") + data

path, count = sys.argv[1], int(sys.argv[2])
sock = socket.socket(socket.AF_UNIX)
sock.connect(path)
sock.sendall(packet(0x10, string("MQTT") + bytes([4, 2, 0, 60]) + string("seed")))
sock.recv(4)
out = bytearray()
for i in range(count):
    device = f"dev-{i}"
    envelope = {"schema": "myeline.activity.v1", "device": device, "activity": "a1", "attributes-type": "location",
                "attributes": {"deviceID": device, "name": f"Vehicle {i}"}, "event": "update", "seq": 2,
                "timestamp": 1700000000, "relevance-score": i % 7,
                "content-state": {"fix": "3d", "latitude": 52.5 + i / 1e5, "longitude": 13.4, "satellites": 9,
                                  "speed": 12.5, "distance": 1000.0, "elapsed": 60.0, "paused": False}}
    out += packet(0x31, string(f"myeline/{device}/activities/a1") + json.dumps(envelope).encode())
# A QoS 1 message last: its PUBACK means the broker has stored everything before it.
out += packet(0x32, string("seed/done") + (1).to_bytes(2, "big") + b"done")
sock.sendall(out)
while sock.recv(4096)[:1] != b"\x40":
    pass
sock.close()
