#!/usr/bin/env python3
"""Rewrite a recorded NMEA capture so that it happens now: for scripts/demo's gpsd receivers.

Usage: shift-nmea.py CAPTURE OUTPUT [REPEATS]

Every time and date field (RMC, GGA, GLL, ZDA) is moved so that the capture's first fix is now
(UTC), with checksums recomputed, a sentence after line noise too (the u-blox 8 capture's first
RMC follows the bytes of a wrong baud rate: left at 2017, gpsd took it for a GPS week rollover and
reported a fix in 2036 at each lap); the capture is written REPEATS times (default 10), each copy
after the previous one, so that gpsfake can play it once as a long, continuous drive whose fixes
a live board does not show as stale. Lines without a sentence are copied unchanged, and so is the
noise before one.
Prints the seconds between sentences that plays the capture at its recorded pace (gpsfake -c).
"""

import datetime
import sys

UTC = datetime.timezone.utc


def checksum(body):
    value = 0
    for character in body:
        value ^= ord(character)
    return "%02X" % value


def parse_time(field):
    """hhmmss[.ss] -> timedelta since midnight, or None."""
    try:
        return datetime.timedelta(hours=int(field[0:2]), minutes=int(field[2:4]), seconds=float(field[4:]))
    except (ValueError, IndexError):
        return None


def sentence(line):
    """(noise, sentence): the sentence from the line's first `$` on, and the bytes before it; the
    sentence is empty when the line has none (a comment)."""
    if line.startswith("#"):
        return line, ""
    noise, dollar, rest = line.partition("$")
    return (noise, dollar + rest) if dollar else (line, "")


def format_time(moment, template):
    decimals = len(template.split(".")[1]) if "." in template else 0
    seconds = moment.second + moment.microsecond / 1e6
    text = "%02d%02d%0*.*f" % (moment.hour, moment.minute, 3 + decimals if decimals else 2, decimals, seconds)
    return text


def main():
    source, target = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    lines = open(source, "rb").read().decode("ascii", "replace").splitlines()

    # The first date and time of the capture, from its first RMC sentence.
    start = None
    for line in lines:
        fields = sentence(line)[1].split("*")[0].split(",")
        if fields[0][3:6] == "RMC" and len(fields) > 9 and parse_time(fields[1]) and len(fields[9]) == 6:
            day = datetime.datetime.strptime(fields[9], "%d%m%y").replace(tzinfo=UTC)
            start = day + parse_time(fields[1])
            break
    if start is None:
        sys.exit("shift-nmea.py: %s has no RMC sentence with a date" % source)
    last = start
    for line in lines:
        fields = sentence(line)[1].split("*")[0].split(",")
        if fields[0][3:6] in ("RMC", "GGA", "GLL") and len(fields) > 1:
            index = 5 if fields[0][3:6] == "GLL" else 1
            if len(fields) > index and parse_time(fields[index]):
                moment = datetime.datetime.combine(last.date(), datetime.time(tzinfo=UTC)) + parse_time(fields[index])
                last = max(last, moment)
    length = last - start + datetime.timedelta(seconds=1)

    now = datetime.datetime.now(UTC)
    sentences = sum(1 for line in lines if sentence(line)[1])
    print("%.4f" % max(0.001, length.total_seconds() / max(1, sentences)))
    with open(target, "w", encoding="ascii", errors="replace") as output:
        for copy in range(repeats):
            shift = now - start + copy * length
            date = start.date()
            for line in lines:
                noise, nmea = sentence(line)
                if "," not in nmea:
                    output.write(line + "\r\n")
                    continue
                body, _, _ = nmea[1:].partition("*")
                fields = body.split(",")
                kind = fields[0][2:5]
                index = {"RMC": 1, "GGA": 1, "GLL": 5, "ZDA": 1}.get(kind)
                if index is not None and len(fields) > index and parse_time(fields[index]):
                    if kind == "RMC" and len(fields) > 9 and len(fields[9]) == 6:
                        date = datetime.datetime.strptime(fields[9], "%d%m%y").date()
                    original = datetime.datetime.combine(date, datetime.time(tzinfo=UTC)) + parse_time(fields[index])
                    moved = original + shift
                    fields[index] = format_time(moved, fields[index])
                    if kind == "RMC" and len(fields) > 9 and len(fields[9]) == 6:
                        fields[9] = moved.strftime("%d%m%y")
                    if kind == "ZDA" and len(fields) > 4:
                        fields[2], fields[3], fields[4] = moved.strftime("%d"), moved.strftime("%m"), moved.strftime("%Y")
                body = ",".join(fields)
                output.write("%s$%s*%s\r\n" % (noise, body, checksum(body)))


if __name__ == "__main__":
    main()
