#!/usr/bin/env python3
"""An unauthenticated client that announces an oversize MQTT CONNECT over TLS.

It connects to HOST:PORT with TLS (trusting CAFILE, host name localhost), sends the fixed header
of a CONNECT packet whose remaining length is 64 MiB, then zeros, 64 KiB at a time, up to 8 MiB
or 10 s, and prints one line: "cut N" when the broker closed the connection after N bytes of the
body, or "open N" when it was still reading after N bytes (it waits 3 s for the broker to close
it). A broker that allocates the packet before it checks its size holds 64 MiB per such client
before anyone logged in (issue 23, finding 1); with max_packet_size it is cut at the header.

Usage: oversize-connect.py HOST PORT CAFILE
"""
import socket
import ssl
import sys
import time

host, port, cafile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
context = ssl.create_default_context(cafile=cafile)
connection = context.wrap_socket(socket.create_connection((host, port), timeout=5), server_hostname="localhost")
# CONNECT (0x10), remaining length 64 MiB = 0x4000000 as a variable byte integer.
connection.sendall(bytes([0x10, 0x80, 0x80, 0x80, 0x20]))
sent, chunk, deadline = 0, bytes(65536), time.monotonic() + 10
try:
    while sent < 8 * 1024 * 1024 and time.monotonic() < deadline:
        connection.sendall(chunk)
        sent += len(chunk)
    connection.settimeout(3)
    print("open" if connection.recv(1) else "cut", sent, flush=True)
except socket.timeout:
    print("open", sent, flush=True)
except (ConnectionError, ssl.SSLError):
    print("cut", sent, flush=True)
