import Foundation
import Interop
import Testing

/// A fixed fix, shared by the golden tests: 2024-03-01T12:00:00.750Z near Berlin.
let fixTime = Date(timeIntervalSince1970: 1_709_294_400.75)

/// The OwnTracks messages Myeline writes, byte for byte, and how it reads phones' messages.
@Suite("OwnTracks codec")
struct OwnTracksCodecTests {
    @Test("a fix becomes the golden location message, integers where the booklet says so")
    func goldenLocation() {
        let location = OwnTracksLocation(
            time: fixTime, latitude: 52.520_008, longitude: 13.404_954, altitude: 34.4, speed: 12.5, course: 271.6,
            horizontalAccuracy: 4.2, trackerID: "v7", trigger: OwnTracksLocation.Trigger.timer)
        let text = String(decoding: OwnTracksCodec.encode(.location(location)), as: UTF8.self)
        #expect(
            text
                == #"{"_type":"location","acc":5,"alt":34,"cog":272,"lat":52.520008,"lon":13.404954,"t":"t","tid":"v7","tst":1709294400,"vel":45}"#
        )
    }

    @Test("the answer to reportLocation carries t r and the battery when known")
    func goldenReportLocation() {
        let location = OwnTracksLocation(
            time: fixTime, latitude: -33.8568, longitude: 151.2153, altitude: nil, speed: nil, course: nil,
            horizontalAccuracy: nil, trackerID: "ab", trigger: OwnTracksLocation.Trigger.reportLocation, battery: 87)
        let text = String(decoding: OwnTracksCodec.encode(.location(location)), as: UTF8.self)
        #expect(
            text == #"{"_type":"location","batt":87,"lat":-33.8568,"lon":151.2153,"t":"r","tid":"ab","tst":1709294400}"#
        )
    }

    @Test("zero, negative, out-of-range and non-finite values are left out, as the apps do")
    func omitted() {
        let location = OwnTracksLocation(
            time: fixTime, latitude: 0, longitude: 0, altitude: 0.2, speed: 0.05, course: 359.7,
            horizontalAccuracy: -1, trackerID: nil, trigger: nil, battery: 101)
        #expect(location.altitude == nil)
        #expect(location.velocity == nil)
        #expect(location.course == nil, "359.7 degrees is 0, which the booklet leaves out")
        #expect(location.accuracy == nil)
        #expect(location.battery == nil)
        let nonFinite = OwnTracksLocation(
            time: fixTime, latitude: 1, longitude: 2, altitude: .infinity, speed: .nan, course: 400,
            horizontalAccuracy: .nan, trackerID: nil, trigger: nil)
        #expect(
            String(decoding: OwnTracksCodec.encode(.location(nonFinite)), as: UTF8.self)
                == #"{"_type":"location","lat":1,"lon":2,"tst":1709294400}"#)
    }

    @Test("a GPX-fed fix, with neither accuracy nor HDOP, still has an acc: Home Assistant drops a location without")
    func accuracyWithoutReceiverEstimate() {
        let location = OwnTracksLocation(
            time: fixTime, latitude: 52.520_008, longitude: 13.404_954, altitude: nil, speed: nil, course: nil,
            horizontalAccuracy: HorizontalAccuracy(receiver: nil, hdop: nil).metres,
            trackerID: OwnTracksLocation.defaultTrackerID(device: "van-7"), trigger: OwnTracksLocation.Trigger.timer)
        #expect(
            String(decoding: OwnTracksCodec.encode(.location(location)), as: UTF8.self)
                == #"{"_type":"location","acc":10,"lat":52.520008,"lon":13.404954,"t":"t","tid":"n7","tst":1709294400}"#
        )
    }

    @Test(
        "the default tid is the device's last two letters or digits",
        arguments: [
            ("van-7", "n7"), ("truck.12", "12"), ("truck42", "42"), ("a-1-", "a1"), ("7", "7"), ("Café_9", "é9"),
            ("--", "--"),
        ])
    func defaultTrackerID(_ device: String, _ trackerID: String) {
        #expect(OwnTracksLocation.defaultTrackerID(device: device) == trackerID)
    }

    @Test("the last will and the command are golden too")
    func goldenLastWillAndCommand() {
        #expect(
            String(decoding: OwnTracksCodec.encode(.lastWill(timestamp: 1_709_294_400)), as: UTF8.self)
                == #"{"_type":"lwt","tst":1709294400}"#)
        #expect(
            String(decoding: OwnTracksCodec.encode(.command(action: "reportLocation")), as: UTF8.self)
                == #"{"_type":"cmd","action":"reportLocation"}"#)
    }

    @Test("every message Myeline writes decodes back to itself")
    func roundTrip() throws {
        let messages: [OwnTracksMessage] = [
            .location(
                OwnTracksLocation(
                    latitude: 52.5, longitude: 13.4, timestamp: 1_709_294_400, accuracy: 5, altitude: 34, velocity: 45,
                    course: 272, trackerID: "v7", trigger: "t", battery: 50)),
            .lastWill(timestamp: 1_709_294_400), .command(action: "reportLocation"),
        ]
        for message in messages {
            let decoded = try OwnTracksCodec.decode(OwnTracksCodec.encode(message))
            #expect(decoded.message == message)
            #expect(decoded.droppedFields.isEmpty)
        }
    }

    /// One phone payload and what the codec makes of it.
    struct Hostile: CustomTestStringConvertible, Sendable {
        let name: String
        let payload: String
        /// The message and the dropped fields, or the rejection's reason.
        let expected: Result<OwnTracksCodec.Decoded, OwnTracksCodec.DecodingError>
        var testDescription: String { name }
    }

    static let base = #""_type":"location","lat":52.5,"lon":13.4,"tst":1709294400"#
    static func kept(
        _ location: OwnTracksLocation = .init(latitude: 52.5, longitude: 13.4, timestamp: 1_709_294_400),
        dropped: [String] = []
    ) -> Result<OwnTracksCodec.Decoded, OwnTracksCodec.DecodingError> {
        .success(.init(message: .location(location), droppedFields: dropped))
    }
    static func rejected(_ reason: String) -> Result<OwnTracksCodec.Decoded, OwnTracksCodec.DecodingError> {
        .failure(.init(reason: reason))
    }

    static let hostile: [Hostile] = [
        Hostile(name: "a plain location", payload: "{\(base)}", expected: kept()),
        Hostile(
            name: "wrong optional types are dropped, the location kept",
            payload: #"{\#(base),"acc":"5","vel":true,"alt":null,"tid":7,"batt":[1]}"#,
            expected: kept(dropped: ["acc", "alt", "batt", "tid", "vel"])),
        Hostile(
            name: "out-of-range optionals are dropped", payload: #"{\#(base),"cog":720,"batt":150,"acc":-3,"t":"tt"}"#,
            expected: kept(dropped: ["acc", "batt", "cog", "t"])),
        Hostile(
            name: "a fractional acc is rounded", payload: #"{\#(base),"acc":12.5}"#,
            expected: kept(.init(latitude: 52.5, longitude: 13.4, timestamp: 1_709_294_400, accuracy: 13))),
        Hostile(
            name: "a control character in tid drops it", payload: "{\(base),\"tid\":\"a\\u0000\"}",
            expected: kept(dropped: ["tid"])),
        Hostile(
            name: "missing lat", payload: #"{"_type":"location","lon":13.4,"tst":1709294400}"#,
            expected: rejected("location without a valid lat (degrees, -90 to 90)")),
        Hostile(
            name: "lat out of range", payload: #"{"_type":"location","lat":91,"lon":13.4,"tst":1709294400}"#,
            expected: rejected("location without a valid lat (degrees, -90 to 90)")),
        Hostile(
            name: "lon as a string", payload: #"{"_type":"location","lat":1,"lon":"13.4","tst":1709294400}"#,
            expected: rejected("location without a valid lon (degrees, -180 to 180)")),
        Hostile(
            name: "tst as a string (some old apps)",
            payload: #"{"_type":"location","lat":1,"lon":2,"tst":"1709294400"}"#,
            expected: rejected("location without a valid tst (whole seconds since 1970)")),
        Hostile(
            name: "tst beyond the year 9999", payload: #"{"_type":"location","lat":1,"lon":2,"tst":1e300}"#,
            expected: rejected("location without a valid tst (whole seconds since 1970)")),
        Hostile(
            name: "negative tst", payload: #"{"_type":"location","lat":1,"lon":2,"tst":-5}"#,
            expected: rejected("location without a valid tst (whole seconds since 1970)")),
        Hostile(
            name: "a fractional tst is refused, not rounded",
            payload: #"{"_type":"location","lat":1,"lon":2,"tst":1709294400.5}"#,
            expected: rejected("location without a valid tst (whole seconds since 1970)")),
        Hostile(
            name: "a whole tst written with a fraction is whole",
            payload: #"{"_type":"location","lat":52.5,"lon":13.4,"tst":1709294400.0}"#, expected: kept()),
        Hostile(
            name: "lwt without tst", payload: #"{"_type":"lwt"}"#,
            expected: rejected("lwt without a valid tst (whole seconds since 1970)")),
        Hostile(
            name: "lwt with a fractional tst", payload: #"{"_type":"lwt","tst":1709294400.25}"#,
            expected: rejected("lwt without a valid tst (whole seconds since 1970)")),
        Hostile(name: "no _type", payload: #"{"lat":1,"lon":2,"tst":3}"#, expected: rejected("no string _type")),
        Hostile(name: "_type a number", payload: #"{"_type":1}"#, expected: rejected("no string _type")),
        Hostile(name: "not JSON", payload: "lat=1,lon=2", expected: rejected("not a JSON object")),
        Hostile(name: "a JSON array", payload: #"[{"_type":"lwt","tst":1}]"#, expected: rejected("not a JSON object")),
        Hostile(name: "empty", payload: "", expected: rejected("not a JSON object")),
        Hostile(
            name: "a field nested 64 deep (JSONDecoder recurses once per level)",
            payload: #"{"_type":"lwt","tst":1,"x":"# + String(repeating: "[", count: 64)
                + String(repeating: "]", count: 64)
                + "}",
            expected: rejected("arrays or objects nested more than 64 deep")),
        Hostile(
            name: "513 opening brackets, the last at the end (JSONDecoder traps on it)",
            payload: String(repeating: "[", count: 513),
            expected: rejected("arrays or objects nested more than 64 deep")),
        Hostile(
            name: "a field nested 63 deep, the most that is read",
            payload: #"{"_type":"lwt","tst":1,"x":"# + String(repeating: "[", count: 63)
                + String(repeating: "]", count: 63)
                + "}",
            expected: .success(.init(message: .lastWill(timestamp: 1), droppedFields: []))),
        Hostile(
            name: "cmd without action", payload: #"{"_type":"cmd"}"#, expected: rejected("cmd without a string action")),
        Hostile(
            name: "another type is named", payload: #"{"_type":"transition","event":"enter"}"#,
            expected: .success(.init(message: .other(type: "transition"), droppedFields: []))),
    ]

    @Test("phones' messages are read as far as they are valid and rejected otherwise", arguments: hostile)
    func hostileInput(_ entry: Hostile) {
        let result = Result { () throws(OwnTracksCodec.DecodingError) in
            try OwnTracksCodec.decode(Array(entry.payload.utf8))
        }
        #expect(result == entry.expected)
    }

    @Test("a payload over the size limit is rejected unread")
    func oversized() {
        let payload =
            Array("{\"_type\":\"lwt\",\"tst\":1,\"x\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 20_000)
            + Array("\"}".utf8)
        #expect(payload.count > OwnTracksCodec.maximumPayloadSize)
        #expect(throws: OwnTracksCodec.DecodingError(reason: "payload of \(payload.count) bytes is too large")) {
            try OwnTracksCodec.decode(payload)
        }
    }

    @Test(
        "topics follow owntracks/USER/DEVICE and its cmd",
        arguments: [
            ("owntracks/jane/phone", true), ("owntracks/jane/phone/cmd", false), ("owntracks/jane", false),
            ("myeline/jane/phone", false), ("owntracks//phone", false), ("owntracks/ja+ne/phone", false),
        ])
    func topics(_ topic: String, _ isLocation: Bool) {
        let parsed = OwnTracksTopic(parsing: topic)
        #expect((parsed != nil) == isLocation)
        if let parsed {
            #expect(parsed.location == topic)
            #expect(parsed.command == topic + "/cmd")
        }
    }
}
