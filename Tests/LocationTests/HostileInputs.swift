import Foundation

@testable import Location

/// The table of hostile NMEA, gpsd JSON and GPX inputs, each with what must come of it.
extension HostileInput {
    /// Every way NaN and infinity are spelled, in text and in JSON (bare, never valid JSON but for
    /// the overflowing numbers).
    static let nonFiniteSpellings = [
        "NaN", "nan", "NAN", "-nan", "+NaN", "nan(0x7ff)", "Infinity", "-Infinity", "+Infinity", "infinity",
        "inf", "-inf", "INF", "+Inf", "1e999", "-1e999",
    ]

    /// A UTC date from an ISO 8601 text, read with Foundation (not the code under test).
    static func utc(_ text: String) -> Date {
        guard let date = ISO8601DateFormatter().date(from: text) else { fatalError("bad date \(text)") }
        return date
    }

    static let all: [HostileInput] = nmea + gpsd + gpx

    // MARK: NMEA

    /// An RMC sentence of 2024-03-15T09:27:51Z at 53.361336667 N, 6.505618333 W, with fields replaced.
    static func rmc(
        time: String = "092751.000", status: String = "A", latitude: String = "5321.6802", north: String = "N",
        longitude: String = "00630.3371", east: String = "W", speed: String = "0.06", course: String = "31.66",
        date: String = "150324"
    ) -> String {
        NMEADecoderTests.sentence(
            "GPRMC,\(time),\(status),\(latitude),\(north),\(longitude),\(east),\(speed),\(course),\(date),,,A")
    }

    static let rmcLatitude = 53 + 21.6802 / 60
    static let rmcLongitude = -(6 + 30.3371 / 60)
    static let rmcFix = Outcome.fix(
        latitude: rmcLatitude, longitude: rmcLongitude, time: utc("2024-03-15T09:27:51Z"))

    static func rmcAt(_ time: Date) -> Outcome { .fix(latitude: rmcLatitude, longitude: rmcLongitude, time: time) }

    static let nmea: [HostileInput] =
        nonFiniteSpellings.flatMap { spelling in
            [
                HostileInput(.nmea, "latitude \(spelling)", rmc(latitude: spelling), .rejected(.invalidField)),
                HostileInput(.nmea, "longitude \(spelling)", rmc(longitude: spelling), .rejected(.invalidField)),
                HostileInput(.nmea, "speed \(spelling)", rmc(speed: spelling), .rejected(.invalidField)),
                HostileInput(.nmea, "course \(spelling)", rmc(course: spelling), .rejected(.invalidField)),
            ]
        } + [
            // The sentence itself.
            HostileInput(.nmea, "the valid sentence", rmc(), rmcFix),
            HostileInput(.nmea, "a lower-case checksum (4b)", String(rmc().dropLast(2)) + "4b", rmcFix),
            HostileInput(.nmea, "a wrong checksum", String(rmc().dropLast(2)) + "00", .rejected(.badChecksum)),
            HostileInput(.nmea, "no checksum", String(rmc().dropLast(3)), .rejected(.truncated)),
            HostileInput(.nmea, "a checksum that is not hex", String(rmc().dropLast(2)) + "G1", .rejected(.truncated)),
            HostileInput(.nmea, "text after the checksum", rmc() + "junk", .rejected(.badChecksum)),
            HostileInput(.nmea, "a sentence cut by the next", "$GPRMC,0927" + rmc(), .fixAfter(.truncated, rmcFix)),
            HostileInput(
                .nmea, "binary junk before the sentence", [0x00, 0xB5, 0x62, 0x01] + Array(rmc().utf8),
                .fixAfter(.binary, rmcFix)),
            HostileInput(.nmea, "text junk before the sentence", "GARBAGE" + rmc(), .fixAfter(.unknown, rmcFix)),
            HostileInput(
                .nmea, "a sentence of 255 characters",
                NMEADecoderTests.sentence("GPTXT," + String(repeating: "x", count: 245)), .ignored),
            HostileInput(
                .nmea, "a sentence of 256 characters",
                NMEADecoderTests.sentence("GPTXT," + String(repeating: "x", count: 246)), .rejected(.tooLong)),
            HostileInput(
                .nmea, "a 10 MB sentence", "$GPTXT," + String(repeating: "1", count: 10_000_000) + "*00",
                .rejected(.tooLong)),
            // Lines longer than 64 KiB are discarded unread (the file source's memory stays bounded).
            HostileInput(.nmea, "a 10 MB line of text", String(repeating: "A", count: 10_000_000), .rejected(.tooLong)),
            HostileInput(
                .nmea, "a 10 MB line of binary", [UInt8](repeating: 0x80, count: 10_000_000), .rejected(.tooLong)),
            HostileInput(
                .nmea, "a 10 MB line, then a sentence", String(repeating: "A", count: 10_000_000) + "\n" + rmc(),
                .fixAfter(.tooLong, rmcFix)),
            HostileInput(.nmea, "a 64 KiB line of text", String(repeating: "A", count: 65_536), .rejected(.unknown)),
            HostileInput(.nmea, "a comment", "# recorded by hand", .ignored),
            HostileInput(
                .nmea, "a proprietary sentence", NMEADecoderTests.sentence("PUBX,00,092751.00,5321.6802,N"), .ignored),
            HostileInput(.nmea, "an unknown sentence type", NMEADecoderTests.sentence("GPXYZ,1,2,3"), .ignored),
            HostileInput(
                .nmea, "an AIS sentence",
                "!" + NMEADecoderTests.sentence("AIVDM,1,1,,A,13aEOK?P00PD2wVMdLDRhgvL289?,0").dropFirst(), .ignored),
            HostileInput(.nmea, "every field empty", NMEADecoderTests.sentence("GPRMC,,,,,,,,,,,,"), .noFix),
            HostileInput(.nmea, "status V (no fix)", rmc(status: "V"), .noFix),
            // Invalid UTF-8 and control characters.
            HostileInput(.nmea, "a lone 0xFF", [0xFF], .rejected(.binary)),
            HostileInput(.nmea, "NUL bytes", [UInt8](repeating: 0, count: 16), .rejected(.binary)),
            HostileInput(
                .nmea, "an overlong UTF-8 slash in a field",
                Array("$GPRMC,092751.000,A,5321.6802,N,".utf8) + [0xC0, 0xAF] + Array("*00".utf8), .rejected(.binary)),
            HostileInput(.nmea, "UTF-8 in a field", rmc(latitude: "5321.68°"), .rejected(.binary)),
            HostileInput(.nmea, "a tab inside the sentence", rmc(latitude: "5321.6802\t"), .rejected(.binary)),
            // Wrong shapes and huge numbers.
            HostileInput(.nmea, "latitude with a sign", rmc(latitude: "-5321.6802"), .rejected(.invalidField)),
            HostileInput(
                .nmea, "latitude of 20 digits", rmc(latitude: "99999999999999999999.9999"), .rejected(.invalidField)),
            HostileInput(.nmea, "latitude minutes 60", rmc(latitude: "5360.0000"), .rejected(.invalidField)),
            HostileInput(.nmea, "latitude 90 59.9999 N", rmc(latitude: "9059.9999"), .dropped(.latitudeOutOfRange)),
            HostileInput(.nmea, "latitude of 91 degrees", rmc(latitude: "9100.0000"), .rejected(.invalidField)),
            HostileInput(
                .nmea, "longitude 180 30 E", rmc(longitude: "18030.0000", east: "E"), .dropped(.longitudeOutOfRange)),
            HostileInput(.nmea, "hemisphere X", rmc(north: "X"), .rejected(.invalidField)),
            HostileInput(.nmea, "hemisphere missing", rmc(north: ""), .rejected(.invalidField)),
            HostileInput(
                .nmea, "null island", rmc(latitude: "0000.0000", north: "N", longitude: "00000.0000", east: "E"),
                .dropped(.nullIsland)),
            HostileInput(.nmea, "speed 1e308 knots", rmc(speed: "1e308"), rmcFix),
            HostileInput(.nmea, "speed 1e309 knots", rmc(speed: "1e309"), .rejected(.invalidField)),
            HostileInput(.nmea, "speed as hex", rmc(speed: "0x1p3"), .rejected(.invalidField)),
            HostileInput(.nmea, "a negative speed", rmc(speed: "-5"), rmcFix),
            HostileInput(.nmea, "time of 5 digits", rmc(time: "09275"), .rejected(.invalidField)),
            HostileInput(
                .nmea, "time with 300 fraction digits", rmc(time: "092751." + String(repeating: "9", count: 200)),
                .rejected(.tooLong)),
            HostileInput(
                .nmea, "time with 20 fraction digits", rmc(time: "092751." + String(repeating: "0", count: 20)), rmcFix),
            HostileInput(.nmea, "hour 24", rmc(time: "240000.000"), .rejected(.invalidField)),
            HostileInput(.nmea, "minute 60", rmc(time: "096000.000"), .rejected(.invalidField)),
            HostileInput(.nmea, "second 61", rmc(time: "092761.000"), .rejected(.invalidField)),
            HostileInput(.nmea, "day 32", rmc(date: "320324"), .rejected(.invalidField)),
            HostileInput(.nmea, "month 13", rmc(date: "151324"), .rejected(.invalidField)),
            HostileInput(.nmea, "29 February 2023", rmc(date: "290223"), .rejected(.invalidField)),
            HostileInput(.nmea, "29 February 2024", rmc(date: "290224"), rmcAt(utc("2024-02-29T09:27:51Z"))),
            HostileInput(.nmea, "a four-digit year", rmc(date: "15032024"), .rejected(.invalidField)),
            // Leap seconds: 23:59:60 is the first instant of the next day, as in UNIX time (and the live
            // gate moves times before 2019-04-07 by 1024 weeks).
            HostileInput(
                .nmea, "a leap second at the end of 2026", rmc(time: "235960.000", date: "311226"),
                rmcAt(utc("2027-01-01T00:00:00Z"))),
            HostileInput(
                .nmea, "leap second 2016-12-31T23:59:60", rmc(time: "235960.000", date: "311216"),
                rmcAt(utc("2017-01-01T00:00:00Z") + 1024 * 7 * 86_400)),
            HostileInput(
                .nmea, "leap second 2015-06-30T23:59:60.5", rmc(time: "235960.500", date: "300615"),
                .fix(
                    latitude: rmcLatitude, longitude: rmcLongitude,
                    time: utc("2015-07-01T00:00:00Z") + 0.5 + 1024 * 7 * 86_400)),
            HostileInput(
                .nmea, "a leap second, then the next second",
                rmc(time: "235960.000", date: "311226") + "\r\n" + rmc(time: "000000.000", date: "010127"),
                .fix(
                    latitude: rmcLatitude, longitude: rmcLongitude, time: utc("2027-01-01T00:00:00Z"),
                    alsoDropped: .duplicateTime)),
            // GPS week-number rollovers (1999-08-22 and 2019-04-07) under the live gate.
            HostileInput(
                .nmea, "the 1999 rollover epoch", rmc(time: "000000.000", date: "220899"),
                rmcAt(utc("2019-04-07T00:00:00Z"))),
            HostileInput(
                .nmea, "the day before the 2019 rollover", rmc(time: "235959.000", date: "060419"),
                rmcAt(utc("2038-11-20T23:59:59Z"))),
            HostileInput(
                .nmea, "the 2019 rollover epoch", rmc(time: "000000.000", date: "070419"),
                rmcAt(utc("2019-04-07T00:00:00Z"))),
            HostileInput(
                .nmea, "GPS time zero, 1980-01-06", rmc(time: "000000.000", date: "060180"),
                rmcAt(utc("2019-04-07T00:00:00Z"))),
            HostileInput(
                .nmea, "the second before 1999-08-22", rmc(time: "235959.000", date: "210899"),
                rmcAt(utc("2038-11-20T23:59:59Z"))),
            HostileInput(
                .nmea, "before GPS time began", rmc(time: "235959.000", date: "050180"), .dropped(.beforeGPSEpoch)),
            HostileInput(
                .nmea, "ZDA of 1979", NMEADecoderTests.sentence("GPZDA,092751.00,15,03,1979,00,00"),
                .rejected(.invalidField)),
            // Found by FuzzNMEA: a year this long overflowed the milliseconds since 1970 (a trap).
            HostileInput(
                .nmea, "ZDA of year 10000", NMEADecoderTests.sentence("GPZDA,092751.00,15,03,10000,00,00"),
                .rejected(.invalidField)),
            HostileInput(
                .nmea, "ZDA of year 2^62", NMEADecoderTests.sentence("GPZDA,092751.00,15,03,4611686018427387904,00,00"),
                .rejected(.invalidField)),
            // The far future: the latest date a two-digit year gives.
            HostileInput(
                .nmea, "31 December 2079", rmc(time: "235959.999", date: "311279"),
                rmcAt(utc("2079-12-31T23:59:59Z") + 0.999)),
        ]

    // MARK: gpsd JSON

    /// A TPV of 2024-03-15T09:27:51Z at 53.5 N, 6.5 W, with `extra` members after the class (a later
    /// member of the same name wins, as in gpsd's own client and most JSON readers).
    static func tpv(_ extra: String = "", time: String = #""2024-03-15T09:27:51.000Z""#) -> String {
        #"{"class":"TPV","# + extra + #""device":"/dev/ttyACM0","mode":3,"time":"# + time + #","lat":53.5,"lon":-6.5}"#
    }

    /// A TPV with the member `key` set to `value` (after the usual ones, so it wins).
    static func tpv(_ key: String, _ value: String) -> String {
        String(tpv().dropLast()) + #","\#(key)":\#(value)}"#
    }

    static let tpvFix = Outcome.fix(latitude: 53.5, longitude: -6.5, time: utc("2024-03-15T09:27:51Z"))

    static func tpvAt(_ time: String) -> Outcome { .fix(latitude: 53.5, longitude: -6.5, time: utc(time)) }

    static let gpsd: [HostileInput] =
        nonFiniteSpellings.flatMap { spelling in
            // Bare, only the overflowing numbers are JSON (and then no finite number).
            let bare: Outcome = spelling.hasSuffix("e999") ? .rejected(.invalidField) : .rejected(.notJSON)
            return ["lat", "lon", "alt", "speed", "track"].flatMap { key in
                [
                    HostileInput(.gpsd, "\(key) \(spelling)", tpv(key, spelling), bare),
                    HostileInput(
                        .gpsd, "\(key) \"\(spelling)\"", tpv(key, "\"\(spelling)\""), .rejected(.invalidField)),
                ]
            }
        } + [
            HostileInput(.gpsd, "the valid TPV", tpv(), tpvFix),
            // Wrong types.
            HostileInput(.gpsd, "latitude as a string", tpv("lat", #""53.5""#), .rejected(.invalidField)),
            HostileInput(.gpsd, "latitude true", tpv("lat", "true"), .rejected(.invalidField)),
            HostileInput(.gpsd, "latitude as an array", tpv("lat", "[53.5]"), .rejected(.invalidField)),
            HostileInput(.gpsd, "latitude as an object", tpv("lat", #"{"deg":53.5}"#), .rejected(.invalidField)),
            HostileInput(
                .gpsd, "latitude and longitude null",
                tpv("lat", "null").replacingOccurrences(of: #""lon":-6.5"#, with: #""lon":null"#), .ignored),
            HostileInput(.gpsd, "mode as a string", tpv("mode", #""3""#), .rejected(.invalidField)),
            HostileInput(.gpsd, "mode 3.5", tpv("mode", "3.5"), .rejected(.invalidField)),
            HostileInput(.gpsd, "mode 1e300", tpv("mode", "1e300"), .rejected(.invalidField)),
            HostileInput(.gpsd, "mode -1", tpv("mode", "-1"), .noFix),
            HostileInput(.gpsd, "mode 99", tpv("mode", "99"), tpvFix),
            HostileInput(.gpsd, "device as a number", tpv("device", "7"), .rejected(.invalidField)),
            HostileInput(.gpsd, "time as an object", tpv("time", "{}"), .rejected(.invalidField)),
            HostileInput(.gpsd, "time true", tpv("time", "true"), .rejected(.invalidField)),
            HostileInput(.gpsd, "class as a number", #"{"class":5,"lat":53.5}"#, .rejected(.unknown)),
            HostileInput(.gpsd, "no class", #"{"mode":3,"lat":53.5,"lon":-6.5}"#, .rejected(.unknown)),
            HostileInput(.gpsd, "class in lower case", #"{"class":"tpv","mode":3,"lat":53.5,"lon":-6.5}"#, .ignored),
            HostileInput(.gpsd, "an empty object", "{}", .rejected(.unknown)),
            HostileInput(.gpsd, "an array", "[]", .rejected(.notJSON)),
            HostileInput(.gpsd, "null", "null", .rejected(.notJSON)),
            HostileInput(.gpsd, "text after the object", tpv() + " x", .rejected(.notJSON)),
            HostileInput(.gpsd, "two objects on a line", tpv() + tpv(), .rejected(.notJSON)),
            HostileInput(.gpsd, "single quotes", "{'class':'TPV'}", .rejected(.notJSON)),
            HostileInput(.gpsd, "a trailing comma", String(tpv().dropLast()) + ",}", .rejected(.notJSON)),
            HostileInput(.gpsd, "an unterminated string", #"{"class":"TPV","device":"/dev/tty"#, .rejected(.notJSON)),
            HostileInput(.gpsd, "a comment", "# gpspipe -w", .ignored),
            HostileInput(.gpsd, "NMEA passed through", rmc(), .ignored),
            // Huge numbers.
            HostileInput(.gpsd, "latitude 1e308", tpv("lat", "1e308"), .dropped(.latitudeOutOfRange)),
            HostileInput(.gpsd, "latitude -1e308", tpv("lat", "-1e308"), .dropped(.latitudeOutOfRange)),
            HostileInput(.gpsd, "longitude 1e308", tpv("lon", "1e308"), .dropped(.longitudeOutOfRange)),
            HostileInput(
                .gpsd, "latitude 1e-400 (underflow to 0)", tpv("lat", "1e-400"),
                .fix(latitude: 0, longitude: -6.5, time: utc("2024-03-15T09:27:51Z"))),
            HostileInput(
                .gpsd, "latitude of 401 digits (beyond a Double)", tpv("lat", "5" + String(repeating: "0", count: 400)),
                .rejected(.invalidField)),
            HostileInput(
                .gpsd, "latitude of 300 digits", tpv("lat", "5" + String(repeating: "0", count: 299)),
                .dropped(.latitudeOutOfRange)),
            HostileInput(
                .gpsd, "latitude of 30 significant digits", tpv("lat", "53.50000000000000000000000000001"), tpvFix),
            HostileInput(.gpsd, "speed 1e308", tpv("speed", "1e308"), tpvFix),
            HostileInput(.gpsd, "altitude -1e308", tpv("alt", "-1e308"), tpvFix),
            HostileInput(.gpsd, "time as 1e300 seconds", tpv(time: "1e300"), .rejected(.invalidField)),
            HostileInput(.gpsd, "time as -1e300 seconds", tpv(time: "-1e300"), .rejected(.invalidField)),
            HostileInput(.gpsd, "time as seconds since 1970 (gpsd before 3.10)", tpv(time: "1710494871"), tpvFix),
            HostileInput(.gpsd, "a number with two signs", tpv("lat", "--53.5"), .rejected(.invalidField)),
            HostileInput(.gpsd, "a lone minus", tpv("lat", "-"), .rejected(.notJSON)),
            // Invalid UTF-8 and control characters.
            HostileInput(.gpsd, "a line of binary", [0xB5, 0x62, 0x01, 0x07, 0x00, 0xFF], .rejected(.binary)),
            HostileInput(
                .gpsd, "invalid UTF-8 in the device path",
                Array(#"{"class":"TPV","device":"/dev/"#.utf8) + [0xFF, 0xFE]
                    + Array(#"","mode":3,"time":"2024-03-15T09:27:51.000Z","lat":53.5,"lon":-6.5}"#.utf8), tpvFix),
            HostileInput(
                .gpsd, "a NUL inside the object", Array(#"{"class":"TPV","#.utf8) + [0] + Array(#""mode":3}"#.utf8),
                .rejected(.binary)),
            HostileInput(.gpsd, "an escaped NUL in the device path", tpv("device", #""\u0000""#), tpvFix),
            HostileInput(.gpsd, "a lone surrogate escape in the device path", tpv("device", #""\ud800""#), tpvFix),
            HostileInput(.gpsd, "a bad escape in the device path", tpv("device", #""\x41""#), .rejected(.notJSON)),
            // Broken after the class: the message's own pass reads past the class and rejects it.
            HostileInput(
                .gpsd, "a SKY whose satellites are cut",
                #"{"class":"SKY","uSat":7,"satellites":[{"PRN":1,"used":true}"#,
                .rejected(.notJSON)),
            HostileInput(
                .gpsd, "a SKY with text after the object", #"{"class":"SKY","uSat":7} x"#, .rejected(.notJSON)),
            HostileInput(
                .gpsd, "a VERSION with a trailing comma", #"{"class":"VERSION","proto_major":3,}"#, .rejected(.notJSON)),
            HostileInput(
                .gpsd, "a DEVICE with text after the object", #"{"class":"DEVICE","path":"/dev/x"} x"#,
                .rejected(.notJSON)),
            HostileInput(
                .gpsd, "an unknown class with text after the object", #"{"class":"PPS","x":1} x"#,
                .rejected(.notJSON)),
            HostileInput(.gpsd, "a broken member before the class", #"{"lat":,"class":"TPV"}"#, .rejected(.notJSON)),
            // Over-long lines and deep nesting.
            HostileInput(
                .gpsd, "a line of 10,241 characters",
                tpv("path", "\"" + String(repeating: "x", count: 10_241 - tpv("path", "\"\"").utf8.count) + "\""),
                .rejected(.tooLong)),
            HostileInput(
                .gpsd, "a line of 10,240 characters",
                tpv("path", "\"" + String(repeating: "x", count: 10_240 - tpv("path", "\"\"").utf8.count) + "\""),
                tpvFix),
            HostileInput(
                .gpsd, "a 10 MB line", tpv("path", "\"" + String(repeating: "x", count: 10_000_000) + "\""),
                .rejected(.tooLong)),
            HostileInput(
                .gpsd, "a 10 MB line, then a TPV", String(repeating: "x", count: 10_000_000) + "\n" + tpv(),
                .fixAfter(.tooLong, tpvFix)),
            HostileInput(
                .gpsd, "arrays nested 5,000 deep",
                tpv("x", String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)), tpvFix),
            HostileInput(
                .gpsd, "objects nested 3,000 deep",
                tpv("x", String(repeating: #"{"a":"#, count: 1500) + "1" + String(repeating: "}", count: 1500)), tpvFix),
            HostileInput(
                .gpsd, "unbalanced nesting", tpv("x", String(repeating: "[", count: 100)), .rejected(.notJSON)),
            HostileInput(
                .gpsd, "a SKY with satellites nested 4,000 deep",
                #"{"class":"SKY","satellites":"# + String(repeating: "[", count: 4000)
                    + String(repeating: "]", count: 4000) + "}", .ignored),
            // Duplicate keys: the last one wins.
            HostileInput(
                .gpsd, "latitude twice", tpv("lat", "10.25"),
                .fix(latitude: 10.25, longitude: -6.5, time: utc("2024-03-15T09:27:51Z"))),
            HostileInput(
                .gpsd, "time twice", tpv("time", #""2024-03-15T09:30:00.000Z""#), tpvAt("2024-03-15T09:30:00Z")),
            HostileInput(.gpsd, "mode twice, the last 1", tpv("mode", "1"), .noFix),
            // Leap seconds.
            HostileInput(
                .gpsd, "a leap second at the end of 2026", tpv(time: #""2026-12-31T23:59:60.000Z""#),
                tpvAt("2027-01-01T00:00:00Z")),
            HostileInput(
                .gpsd, "leap second 2016-12-31T23:59:60Z", tpv(time: #""2016-12-31T23:59:60.000Z""#),
                .fix(latitude: 53.5, longitude: -6.5, time: utc("2017-01-01T00:00:00Z") + 1024 * 7 * 86_400)),
            HostileInput(.gpsd, "second 61", tpv(time: #""2016-12-31T23:59:61.000Z""#), .rejected(.invalidField)),
            HostileInput(.gpsd, "hour 24", tpv(time: #""2016-12-31T24:00:00.000Z""#), .rejected(.invalidField)),
            // GPS week-number rollovers under the live gate.
            HostileInput(
                .gpsd, "the 1999 rollover epoch", tpv(time: #""1999-08-22T00:00:00.000Z""#),
                tpvAt("2019-04-07T00:00:00Z")),
            HostileInput(
                .gpsd, "the day before the 2019 rollover", tpv(time: #""2019-04-06T23:59:59.000Z""#),
                tpvAt("2038-11-20T23:59:59Z")),
            HostileInput(
                .gpsd, "the 2019 rollover epoch", tpv(time: #""2019-04-07T00:00:00.000Z""#),
                tpvAt("2019-04-07T00:00:00Z")),
            HostileInput(
                .gpsd, "GPS time zero", tpv(time: #""1980-01-06T00:00:00.000Z""#), tpvAt("2019-04-07T00:00:00Z")),
            HostileInput(.gpsd, "UNIX time zero", tpv(time: #""1970-01-01T00:00:00.000Z""#), .dropped(.beforeGPSEpoch)),
            HostileInput(.gpsd, "year 1", tpv(time: #""0001-01-01T00:00:00.000Z""#), .dropped(.beforeGPSEpoch)),
            HostileInput(.gpsd, "time 0 seconds", tpv(time: "0"), .dropped(.beforeGPSEpoch)),
            // The far future.
            HostileInput(
                .gpsd, "9999-12-31T23:59:59Z", tpv(time: #""9999-12-31T23:59:59.000Z""#), tpvAt("9999-12-31T23:59:59Z")),
            HostileInput(.gpsd, "year 10000", tpv(time: #""10000-01-01T00:00:00.000Z""#), .rejected(.invalidField)),
            HostileInput(.gpsd, "year +275760", tpv(time: #""+275760-09-13T00:00:00.000Z""#), .rejected(.invalidField)),
            HostileInput(
                .gpsd, "a time zone of +25:00", tpv(time: #""2024-03-15T09:27:51+25:00""#), .rejected(.invalidField)),
            HostileInput(.gpsd, "a time zone of +01:00", tpv(time: #""2024-03-15T10:27:51+01:00""#), tpvFix),
            HostileInput(.gpsd, "a date only", tpv(time: #""2024-03-15""#), .rejected(.invalidField)),
        ]

    // MARK: GPX

    /// A GPX 1.1 document with one track point (`attributes` and `body` inside it).
    static func gpx(
        attributes: String = #"lat="53.5" lon="-6.5""#,
        body: String = "<ele>12.5</ele><time>2024-03-15T09:27:51Z</time>",
        before: String = ""
    ) -> String {
        #"<?xml version="1.0" encoding="UTF-8"?>"# + before
            + #"<gpx version="1.1" creator="hostile" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"#
            + "<trkpt \(attributes)>\(body)</trkpt></trkseg></trk></gpx>"
    }

    static let gpxFix = Outcome.fix(latitude: 53.5, longitude: -6.5, time: utc("2024-03-15T09:27:51Z"))

    static func gpxAt(_ time: String) -> Outcome { .fix(latitude: 53.5, longitude: -6.5, time: utc(time)) }

    static func gpxTime(_ time: String) -> String { gpx(body: "<time>\(time)</time>") }

    static let gpx: [HostileInput] =
        nonFiniteSpellings.flatMap { spelling in
            [
                HostileInput(
                    .gpx, "lat=\"\(spelling)\"", gpx(attributes: #"lat="\#(spelling)" lon="-6.5""#),
                    .rejected(.invalidField)),
                HostileInput(
                    .gpx, "lon=\"\(spelling)\"", gpx(attributes: #"lat="53.5" lon="\#(spelling)""#),
                    .rejected(.invalidField)),
                HostileInput(
                    .gpx, "<ele>\(spelling)</ele>",
                    gpx(body: "<ele>\(spelling)</ele><time>2024-03-15T09:27:51Z</time>"), .rejected(.invalidField)),
            ]
        } + [
            HostileInput(.gpx, "the valid document", gpx(), gpxFix),
            // Wrong types and shapes.
            HostileInput(.gpx, "no lat", gpx(attributes: #"lon="-6.5""#), .rejected(.invalidField)),
            HostileInput(
                .gpx, "lat with spaces", gpx(attributes: #"lat=" 53.5 " lon="-6.5""#), .rejected(.invalidField)),
            HostileInput(
                .gpx, "lat with a comma", gpx(attributes: #"lat="53,5" lon="-6.5""#), .rejected(.invalidField)),
            HostileInput(
                .gpx, "lat twice (not well-formed)", gpx(attributes: #"lat="53.5" lat="10" lon="-6.5""#),
                .rejected(.invalidXML)),
            HostileInput(.gpx, "lat 91", gpx(attributes: #"lat="91" lon="-6.5""#), .dropped(.latitudeOutOfRange)),
            HostileInput(.gpx, "lat 1e308", gpx(attributes: #"lat="1e308" lon="-6.5""#), .dropped(.latitudeOutOfRange)),
            HostileInput(.gpx, "lon -181", gpx(attributes: #"lat="53.5" lon="-181""#), .dropped(.longitudeOutOfRange)),
            HostileInput(
                .gpx, "ele as a word", gpx(body: "<ele>high</ele><time>2024-03-15T09:27:51Z</time>"),
                .rejected(.invalidField)),
            HostileInput(.gpx, "ele 1e308", gpx(body: "<ele>1e308</ele><time>2024-03-15T09:27:51Z</time>"), gpxFix),
            HostileInput(
                .gpx, "sat as a word (not checked)", gpx(body: "<sat>many</sat><time>2024-03-15T09:27:51Z</time>"),
                gpxFix),
            HostileInput(.gpx, "time as a word", gpxTime("yesterday"), .rejected(.invalidField)),
            HostileInput(.gpx, "time as epoch seconds", gpxTime("1710494871"), .rejected(.invalidField)),
            HostileInput(.gpx, "an empty document", "", .rejected(.invalidXML)),
            HostileInput(.gpx, "not XML", "lat,lon\n53.5,-6.5", .rejected(.invalidXML)),
            HostileInput(.gpx, "a document cut short", String(gpx().prefix(200)), .rejected(.invalidXML)),
            HostileInput(.gpx, "no points", #"<gpx version="1.1"><trk><trkseg></trkseg></trk></gpx>"#, .ignored),
            HostileInput(
                .gpx, "a point in an undeclared namespace prefix",
                gpx().replacingOccurrences(of: "trkpt", with: "x:trkpt"), gpxFix),
            // Invalid UTF-8, control characters, huge and deep documents. Text the reader does not use
            // is not decoded, so invalid UTF-8 in it costs nothing; control characters, which XML does
            // not allow, are counted.
            HostileInput(
                .gpx, "invalid UTF-8 in a name",
                Array(gpx().replacingOccurrences(of: "<trk>", with: "<trk><name>#</name>").utf8).map {
                    $0 == UInt8(ascii: "#") ? 0xFF : $0
                }, gpxFix),
            HostileInput(
                .gpx, "a NUL byte in a name",
                Array(gpx().replacingOccurrences(of: "<trk>", with: "<trk><name>#</name>").utf8).map {
                    $0 == UInt8(ascii: "#") ? 0 : $0
                }, .fixAfter(.binary, gpxFix)),
            HostileInput(
                .gpx, "a 10 MB description (read in pieces, never held)",
                gpx().replacingOccurrences(
                    of: "<trk>", with: "<trk><desc>" + String(repeating: "d", count: 10_000_000) + "</desc>"),
                gpxFix),
            HostileInput(
                .gpx, "a 1 MB description",
                gpx().replacingOccurrences(
                    of: "<trk>", with: "<trk><desc>" + String(repeating: "d", count: 1_000_000) + "</desc>"), gpxFix),
            HostileInput(
                .gpx, "elements nested 10,000 deep",
                gpx().replacingOccurrences(
                    of: "<trk>",
                    with: String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000) + "<trk>"),
                gpxFix),
            HostileInput(
                .gpx, "a point cut short", String(gpx().prefix(while: { $0 != "/" }).dropLast()) + "",
                .rejected(.invalidXML)),
            HostileInput(
                .gpx, "an exponential entity (billion laughs: never expanded)",
                gpx(body: "<time>2024-03-15T09:27:51Z</time><name>&l9;</name>", before: billionLaughs),
                gpxFix),
            HostileInput(
                .gpx, "an external entity",
                gpx(
                    body: "<time>2024-03-15T09:27:51Z</time><name>&x;</name>",
                    before: #"<!DOCTYPE gpx [<!ENTITY x SYSTEM "file:///etc/passwd">]>"#), gpxFix),
            // Found by fuzzing: Foundation's XMLParser crashed on a processing instruction without data,
            // also after a declaration left open; a declaration left open is not well-formed.
            HostileInput(.gpx, "a processing instruction without data", gpx(before: "<?x?>"), gpxFix),
            HostileInput(
                .gpx, "an XML declaration left open, then an instruction without data",
                gpx(body: "<?x?><time>2024-03-15T09:27:51Z</time>").replacingOccurrences(
                    of: #"encoding="UTF-8"?>"#, with: #"encoding="UTF-8""#), .rejected(.invalidXML)),
            HostileInput(.gpx, "a stylesheet instruction", gpx(before: #"<?xml-stylesheet href="a.xsl"?>"#), gpxFix),
            // Hostile XML for the reader's own tokenizer: unclosed tags, huge attributes, deep nesting,
            // entities that are never expanded, and the XML it must read.
            HostileInput(
                .gpx, "the root element never closed", String(gpx().dropLast("</gpx>".count)),
                .fixAfter(.invalidXML, gpxFix)),
            HostileInput(
                .gpx, "the point's time never closed",
                gpx().replacingOccurrences(of: "</time>", with: ""), .rejected(.invalidXML)),
            HostileInput(
                .gpx, "a 2 MiB attribute before the point",
                gpx().replacingOccurrences(
                    of: "<trk>", with: "<trk name=\"" + String(repeating: "a", count: 2 << 20) + "\">"),
                .rejected(.invalidXML)),
            HostileInput(
                .gpx, "a 100 KiB attribute before the point",
                gpx().replacingOccurrences(
                    of: "<trk>", with: "<trk name=\"" + String(repeating: "a", count: 100 << 10) + "\">"), gpxFix),
            HostileInput(
                .gpx, "elements nested 100,001 deep",
                gpx().replacingOccurrences(of: "<trk>", with: String(repeating: "<a>", count: 100_001) + "<trk>"),
                .rejected(.invalidXML)),
            HostileInput(.gpx, "lat and lon in single quotes", gpx(attributes: "lat='53.5' lon='-6.5'"), gpxFix),
            HostileInput(
                .gpx, "lat with a character reference", gpx(attributes: #"lat="&#53;3.5" lon="-6.5""#), gpxFix),
            HostileInput(.gpx, "the time in CDATA", gpxTime("<![CDATA[2024-03-15T09:27:51Z]]>"), gpxFix),
            HostileInput(.gpx, "a comment inside the time", gpxTime("2024-03-15T09:27<!-- : -->:51Z"), gpxFix),
            HostileInput(
                .gpx, "an undefined entity in a name",
                gpx(body: "<name>&nbsp;</name><time>2024-03-15T09:27:51Z</time>"), gpxFix),
            HostileInput(
                .gpx, "a declared entity for the time (never expanded)",
                gpx(
                    body: "<time>&t;</time>", before: #"<!DOCTYPE gpx [<!ENTITY t "2024-03-15T09:27:51Z">]>"#),
                .rejected(.invalidField)),
            HostileInput(
                .gpx, "a 1 MB entity used 1,000 times (quadratic blowup: never expanded)",
                gpx(
                    body: "<time>2024-03-15T09:27:51Z</time><name>" + String(repeating: "&big;", count: 1000)
                        + "</name>",
                    before: "<!DOCTYPE gpx [<!ENTITY big \"" + String(repeating: "b", count: 1_000_000) + "\">]>"),
                gpxFix),
            HostileInput(
                .gpx, "a control character in a description",
                gpx(body: "<desc>\u{1}</desc><time>2024-03-15T09:27:51Z</time>"), .fixAfter(.binary, gpxFix)),
            // Leap seconds, rollovers and the far future (the live gate corrects rollovers).
            HostileInput(
                .gpx, "a leap second at the end of 2026", gpxTime("2026-12-31T23:59:60Z"), gpxAt("2027-01-01T00:00:00Z")
            ),
            HostileInput(.gpx, "second 61", gpxTime("2016-12-31T23:59:61Z"), .rejected(.invalidField)),
            HostileInput(
                .gpx, "the 1999 rollover epoch", gpxTime("1999-08-22T00:00:00Z"), gpxAt("2019-04-07T00:00:00Z")),
            HostileInput(
                .gpx, "the day before the 2019 rollover", gpxTime("2019-04-06T23:59:59Z"), gpxAt("2038-11-20T23:59:59Z")
            ),
            HostileInput(
                .gpx, "the 2019 rollover epoch", gpxTime("2019-04-07T00:00:00Z"), gpxAt("2019-04-07T00:00:00Z")),
            HostileInput(.gpx, "before GPS time began", gpxTime("1979-12-31T23:59:59Z"), .dropped(.beforeGPSEpoch)),
            HostileInput(.gpx, "9999-12-31T23:59:59Z", gpxTime("9999-12-31T23:59:59Z"), gpxAt("9999-12-31T23:59:59Z")),
            HostileInput(.gpx, "year 10000", gpxTime("10000-01-01T00:00:00Z"), .rejected(.invalidField)),
        ]

    /// Nine levels of ten-fold entity expansion: 10^9 `lol`s if a parser expanded them all.
    static let billionLaughs =
        #"<!DOCTYPE gpx [<!ENTITY l0 "lol">"#
        + (1...9).map { level in
            #"<!ENTITY l\#(level) ""# + String(repeating: "&l\(level - 1);", count: 10) + #"">"#
        }.joined() + "]>"
}
