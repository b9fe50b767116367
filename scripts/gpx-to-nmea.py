#!/usr/bin/env python3
"""Turn a recorded GPX track into an NMEA capture with speed and course: for scripts/demo's replays.

Usage: gpx-to-nmea.py TRACK.gpx OUTPUT.nmea

GPX points carry a position and a time only, so a replayed GPX track shows no speed or course.
This writes one RMC and one GGA sentence per track point, at the point's recorded time and in the file's order, with the
speed over ground and the course computed from the previous point (the great-circle distance and
initial bearing over the time between them); the agent replays NMEA captures like GPX tracks.
"""

import datetime
import math
import re
import sys


def checksum(body):
    value = 0
    for character in body:
        value ^= ord(character)
    return "%02X" % value


def sentence(body):
    return "$%s*%s\r\n" % (body, checksum(body))


def coordinate(value, positive, negative, width):
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    return "%0*d%07.4f" % (width, degrees, minutes), hemisphere


def main():
    source, target = sys.argv[1], sys.argv[2]
    text = open(source, encoding="utf-8").read()
    points = []
    for match in re.finditer(r"<trkpt\s+lat=\"([-0-9.]+)\"\s+lon=\"([-0-9.]+)\"(.*?)</trkpt>", text, re.S):
        when = re.search(r"<time>([^<]+)</time>", match.group(3))
        if when:
            moment = datetime.datetime.fromisoformat(when.group(1).replace("Z", "+00:00"))
            points.append((float(match.group(1)), float(match.group(2)), moment))
    if len(points) < 2:
        sys.exit("gpx-to-nmea.py: %s has fewer than two timed track points" % source)
    with open(target, "w", encoding="ascii") as output:
        previous = None
        for latitude, longitude, moment in points:
            speed_knots, course = 0.0, 0.0
            if previous:
                seconds = (moment - previous[2]).total_seconds()
                phi1, phi2 = math.radians(previous[0]), math.radians(latitude)
                delta = math.radians(longitude - previous[1])
                metres = 6_371_000 * math.acos(
                    min(1, math.sin(phi1) * math.sin(phi2) + math.cos(phi1) * math.cos(phi2) * math.cos(delta)))
                # Some recorded tracks have points out of time order: no speed across such a step.
                speed_knots = metres / seconds * 3600 / 1852 if seconds > 0 else 0
                course = math.degrees(math.atan2(
                    math.sin(delta) * math.cos(phi2),
                    math.cos(phi1) * math.sin(phi2) - math.sin(phi1) * math.cos(phi2) * math.cos(delta))) % 360
            lat, ns = coordinate(latitude, "N", "S", 2)
            lon, ew = coordinate(longitude, "E", "W", 3)
            clock, date = moment.strftime("%H%M%S.00"), moment.strftime("%d%m%y")
            output.write(sentence("GPRMC,%s,A,%s,%s,%s,%s,%.1f,%.1f,%s,,,A" % (clock, lat, ns, lon, ew, speed_knots, course, date)))
            output.write(sentence("GPGGA,%s,%s,%s,%s,%s,1,08,1.0,0.0,M,0.0,M,," % (clock, lat, ns, lon, ew)))
            previous = (latitude, longitude, moment)


if __name__ == "__main__":
    main()
