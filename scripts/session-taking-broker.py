#!/usr/bin/env python3
"""A stand-in MQTT 5 broker that takes every session over.

It accepts a connection on the unix socket SOCKET, answers SUBSCRIBE, PUBLISH and PUBREL as a
broker does, and HOLD seconds after the CONNACK sends DISCONNECT with reason 0x8E (session taken
over), as a broker does when another client connects with the same client id; then it waits for
the next connection. It prints one line per connection. Debian 12's mosquitto (2.0.11) never
sends that reason (2.0.15 and later do), so the fault test of docs/reliability.md (scenario 8)
uses this to check the agent's reaction to it. With `no-suback`, it leaves SUBSCRIBE unanswered:
the connection ends before the subscription is acknowledged.

Usage: session-taking-broker.py SOCKET HOLD [no-suback]
"""
import socket, sys, time

path, hold = sys.argv[1], float(sys.argv[2])
answer_subscribe = sys.argv[3:] != ["no-suback"]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(8)
print("listening", flush=True)


def read_packet(conn, buffer):
    """One packet (type byte, body) from the connection's buffer, or None if incomplete."""
    if len(buffer) < 2:
        return None
    length, multiplier, index = 0, 1, 1
    while True:
        if index >= len(buffer):
            return None
        byte = buffer[index]
        length += (byte & 0x7F) * multiplier
        multiplier *= 128
        index += 1
        if byte & 0x80 == 0:
            break
    if len(buffer) < index + length:
        return None
    packet = (buffer[0], bytes(buffer[index:index + length]))
    del buffer[:index + length]
    return packet


def encode(kind, body):
    length, header = len(body), bytearray([kind])
    while True:
        byte = length % 128
        length //= 128
        header.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(header) + body


count = 0
while True:
    conn, _ = server.accept()
    count += 1
    print(f"connection {count}", flush=True)
    buffer, deadline = bytearray(), None
    conn.settimeout(0.05)
    while deadline is None or time.monotonic() < deadline:
        try:
            data = conn.recv(65536)
            if not data:
                break
            buffer += data
        except socket.timeout:
            pass
        while (packet := read_packet(conn, buffer)) is not None:
            kind, body = packet
            if kind >> 4 == 1:  # CONNECT: accepted, no properties
                conn.sendall(encode(0x20, b"\x00\x00\x00"))
                deadline = time.monotonic() + hold
            elif kind >> 4 == 8 and answer_subscribe:  # SUBSCRIBE: grant QoS 1 to each filter
                mid, props = body[:2], body[2]
                filters, rest = 0, body[3 + props:]
                while rest:
                    size = int.from_bytes(rest[:2], "big")
                    rest, filters = rest[3 + size:], filters + 1
                conn.sendall(encode(0x90, mid + b"\x00" + b"\x01" * filters))
            elif kind >> 4 == 3 and (kind >> 1) & 3:  # PUBLISH QoS 1 or 2
                size = int.from_bytes(body[:2], "big")
                mid = body[2 + size:4 + size]
                conn.sendall(encode(0x40 if (kind >> 1) & 3 == 1 else 0x50, mid))
            elif kind >> 4 == 6:  # PUBREL
                conn.sendall(encode(0x70, body[:2]))
            elif kind >> 4 == 12:  # PINGREQ
                conn.sendall(encode(0xD0, b""))
    if deadline is not None:
        conn.sendall(encode(0xE0, b"\x8e\x00"))
        print(f"took session {count} over", flush=True)
    conn.close()
