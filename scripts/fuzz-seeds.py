#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzzing/) into OUT/<target>/, from the repository's
real inputs: receiver captures and gpsd outputs (Tests/LocationTests/Data), GPX files, the wire
examples of docs/topics.md and docs/intents.md, OwnTracks messages, and the example agent
configuration.

Captures are cut into pieces of whole lines of at most MAX bytes, so that every seed fits the
fuzzer's -max_len and an execution stays short. Usage: scripts/fuzz-seeds.py OUT MAX"""
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1])
limit = int(sys.argv[2])
data = root / "Tests/LocationTests/Data"


def write(target, name, content):
    directory = out / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(content)


def pieces(content):
    """Whole lines, at most `limit` bytes a piece (a longer line is cut)."""
    piece = b""
    for line in content.splitlines(keepends=True):
        if len(piece) + len(line) > limit and piece:
            yield piece
            piece = b""
        piece += line[:limit]
    if piece:
        yield piece


for capture in sorted((data / "gpsd-logs").glob("*.log")):
    for index, piece in enumerate(pieces(capture.read_bytes())):
        write("FuzzNMEA", f"{capture.stem}-{index}", piece)
for output in sorted((data / "gpsd-logs").glob("*.chk")):
    for index, piece in enumerate(pieces(output.read_bytes())):
        write("FuzzGpsd", f"{output.stem}-{index}", piece)
for gpx in sorted((data / "gpx").glob("*.gpx")):
    write("FuzzGPX", gpx.stem, gpx.read_bytes()[:limit])

schemas = {"myeline.activity.v1": "FuzzEnvelope", "myeline.status.v1": "FuzzEnvelope",
           "myeline.track.v1": "FuzzEnvelope", "myeline.command.v1": "FuzzCommand"}
for document in ["docs/topics.md", "docs/intents.md"]:
    text = (root / document).read_text()
    for index, block in enumerate(re.findall(r"```json\n(.*?)```", text, re.S)):
        target = schemas.get(json.loads(block).get("schema"))
        if target:
            stem = f"{pathlib.Path(document).stem}-{index}"
            write(target, stem, block.encode())
            # The wire form: compact, keys sorted, as WireCodec writes it.
            compact = json.dumps(json.loads(block), sort_keys=True, separators=(",", ":"))
            write(target, stem + "-compact", compact.encode())

# OwnTracks messages, which FuzzEnvelope also decodes as the board does with --owntracks: the
# location of docs/integrations.md, a last will and a command.
integrations = (root / "docs/integrations.md").read_text()
owntracks = re.findall(r'^\{"_type":"location".*\}$', integrations, re.M)
owntracks += ['{"_type":"lwt","tst":1709294400}', '{"_type":"cmd","action":"reportLocation"}']
for index, message in enumerate(owntracks):
    write("FuzzEnvelope", f"owntracks-{index}", message.encode())

# Inputs the fuzzer once crashed on, kept as seeds so that every run tries them first (each is also a
# regression test in Tests/): JSONDecoder traps when the 513th level of nesting opens at the last byte
# (FuzzCommand).
write("FuzzCommand", "crash-nested-513", b"\t" + b"[" * 513)
write("FuzzEnvelope", "crash-nested-513", b"[" * 513)

example = (root / "config/agent.example.yaml").read_text()
write("FuzzConfiguration", "agent.example", example.encode())
# The same with every commented-out key set, and a device id: a file that loads.
uncommented = re.sub(r"^(\s*)# ([a-z-]+:( .*)?)$", r"\1\2", example, flags=re.M)
write("FuzzConfiguration", "agent.uncommented", uncommented.encode())
write("FuzzConfiguration", "minimal", b"device:\n  id: van-7\n")
