import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// The exact bytes of every payload (keys sorted, dates as epoch seconds rounded to milliseconds,
/// absent optionals omitted), and that decoding them loses nothing.
@Suite("Wire format")
struct WireCodecTests {
    static let attributes =
        #""attributes":{"destination":{"latitude":52.5651,"longitude":13.3343,"name":"Depot North"},"#
        + #""deviceID":"van-7","driver":"Ana","name":"Van 7","vehicle":"B-MY 1234"},"attributes-type":"location","#
    static let fullState =
        #""content-state":{"altitude":34.5,"course":87.5,"distance":1234.5,"elapsed":600,"eta":1700001800,"#
        + #""fix":"3d","fixTime":1700000059.5,"horizontalAccuracy":4.8,"latitude":52.520008,"longitude":13.404954,"#
        + #""paused":false,"progress":0.25,"satellites":9,"speed":12.25},"#
    static let activity = #""activity":"3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10","#

    static let goldens: [String: String] = [
        "envelope-start-minimal": #"{"activity":"trip-0","# + attributes
            + #""content-state":{"distance":0,"elapsed":0,"fix":"none","paused":false},"device":"van-7","#
            + #""event":"start","relevance-score":0,"schema":"myeline.activity.v1","seq":1,"timestamp":1700000000}"#,
        "envelope-start-full": "{" + activity + attributes + fullState
            + #""device":"van-7","event":"start","relevance-score":50,"schema":"myeline.activity.v1","seq":1,"#
            + #""stale-date":1700000120,"timestamp":1700000000}"#,
        "envelope-update-alert": "{" + activity
            + #""alert":{"body":"Van 7 is 5 minutes from Depot North","sound":"chime","title":"Arriving"},"#
            + attributes + fullState
            + #""device":"van-7","event":"update","relevance-score":0,"schema":"myeline.activity.v1","seq":2,"#
            + #""timestamp":1700000060.123}"#,
        "envelope-end": "{" + activity + attributes + fullState
            + #""device":"van-7","dismissal-date":1700014460.123,"event":"end","relevance-score":0,"#
            + #""schema":"myeline.activity.v1","seq":3,"timestamp":1700000060.123}"#,
        "status-online-dropped":
            #"{"device":"van-7","dropped":1200,"schema":"myeline.status.v1","since":1700000000,"state":"online","#
            + #""version":"0.1.0"}"#,
        "status-online":
            #"{"device":"van-7","schema":"myeline.status.v1","since":1700000000,"state":"online","version":"0.1.0"}"#,
        "status-offline": #"{"device":"van-7","reason":"shutdown","schema":"myeline.status.v1","since":1700000000,"#
            + #""state":"offline","version":"0.1.0"}"#,
        "status-will": #"{"device":"van-7","reason":"connection-lost","schema":"myeline.status.v1","#
            + #""state":"offline","version":"0.1.0"}"#,
        "status-online-instance": #"{"device":"van-7","instance":"4f1c9a2e","schema":"myeline.status.v1","#
            + #""since":1700000000,"state":"online","version":"0.1.0"}"#,
        "track-full": "{" + activity
            + #""altitude":34.5,"course":87.5,"device":"van-7","fix":"3d","horizontalAccuracy":4.8,"#
            + #""latitude":52.520008,"longitude":13.404954,"satellites":9,"schema":"myeline.track.v1","seq":1,"#
            + #""speed":12.25,"time":1700000059.5}"#,
        "track-minimal": #"{"activity":"trip-1","device":"van-7","latitude":-33.8688,"longitude":151.2093,"#
            + #""schema":"myeline.track.v1","seq":2,"time":1700000000}"#,
        "command": #"{"id":"req-1","intent":"start","schema":"myeline.command.v1","timestamp":1700000000}"#,
        "command-with-activity": "{" + activity
            + #""id":"req-2","intent":"pause","schema":"myeline.command.v1","timestamp":1700000000}"#,
        "command-start-new":
            #"{"id":"req-3","intent":"start","new":true,"schema":"myeline.command.v1","timestamp":1700000000}"#,
        "command-result-ok": "{" + activity
            + #""id":"req-1","intent":"start","ok":true,"schema":"myeline.command-result.v1","timestamp":1700000000}"#,
        "command-result-error": #"{"error":"an activity is already running","id":"req-1","intent":"start","#
            + #""ok":false,"schema":"myeline.command-result.v1","timestamp":1700000000}"#,
    ]

    @Test("every payload encodes to its golden bytes, which decode and encode again to the same bytes")
    func goldens() async throws {
        let samples = try await WireSample.all()
        #expect(Set(samples.map(\.name)) == Set(Self.goldens.keys))
        for sample in samples {
            #expect(sample.json == Self.goldens[sample.name], "\(sample.name)")
            #expect(try sample.reencoded() == sample.data, "\(sample.name) round trip")
        }
    }

    @Test("the header of an envelope decodes without knowing its attributes type")
    func header() throws {
        let json =
            #"{"activity":"t-1","attributes":{"label":"break"},"attributes-type":"timer","#
            + #""content-state":{"seconds":900},"device":"pi-2","event":"update","relevance-score":0,"#
            + #""schema":"myeline.activity.v1","seq":7,"timestamp":1700000000}"#
        let header = try WireCodec.decode(EnvelopeHeader.self, from: Data(json.utf8))
        #expect(header.device == (try DeviceID("pi-2")))
        #expect(header.activity == "t-1")
        #expect(header.attributesType == "timer")
        #expect(header.event == .update)
        #expect(header.seq == 7)
        let timer = try WireCodec.decode(ActivityEnvelope<TimerAttributes>.self, from: Data(json.utf8))
        #expect(timer.content.state.seconds == 900)
    }

    @Test("unknown keys are ignored")
    func unknownKeys() throws {
        let json =
            #"{"battery":0.8,"device":"van-7","schema":"myeline.status.v1","since":1700000000,"#
            + #""state":"online","version":"0.2.0"}"#
        let status = try WireCodec.decode(StatusMessage.self, from: Data(json.utf8))
        #expect(status == StatusMessage.online(device: try Fixtures.device(), since: Fixtures.t0, version: "0.2.0"))
    }

    @Test("the status's optional storage-error and clock-offset round-trip, and a v1 status has neither")
    func statusStorageErrorAndClockOffset() throws {
        let device = try Fixtures.device()
        let status = StatusMessage.online(
            device: device, since: Fixtures.t0, dropped: 3, storageError: "writing /var/lib/myeline/x failed",
            clockOffset: -3600, version: "0.2.0")
        let json = String(decoding: try WireCodec.encode(status), as: UTF8.self)
        #expect(
            json.contains(#""storage-error":"writing \/var\/lib\/myeline\/x failed""#)
                || json.contains(#""storage-error":"writing /var/lib/myeline/x failed""#), "\(json)")
        #expect(json.contains(#""clock-offset":-3600"#), "\(json)")
        #expect(try WireCodec.decode(StatusMessage.self, from: Data(json.utf8)) == status)
        let plain = String(
            decoding: try WireCodec.encode(StatusMessage.online(device: device, since: Fixtures.t0)), as: UTF8.self)
        #expect(!plain.contains("storage-error") && !plain.contains("clock-offset"))
        let tooLong =
            #"{"device":"van-7","schema":"myeline.status.v1","since":1700000000,"state":"online","version":"0.2.0","#
            + #""storage-error":"\#(String(repeating: "x", count: 1025))"}"#
        #expect(throws: ActivityError.self) { try WireCodec.decode(StatusMessage.self, from: Data(tooLong.utf8)) }
    }

    @Test("a dismissed event has no envelope")
    func dismissedHasNoEnvelope() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        try activity.end(nil, dismissalPolicy: .immediate)
        let events = await activity.events.collect()
        let device = try Fixtures.device()
        #expect(events.map { ActivityEnvelope(event: $0, device: device) == nil } == [false, false, true])
    }

    @Test("encoding refuses what receivers would reject, naming the key")
    func encodingRefusesInvalidValues() async throws {
        let device = try Fixtures.device()
        let point = TrackPoint(
            device: device, activity: "trip-1", seq: 1, time: Fixtures.t0, latitude: 91, longitude: 0)
        let outside = #expect(throws: ActivityError.self) { try WireCodec.encode(point) }
        #expect(outside?.code == .invalidPayload)
        #expect(outside?.message == "cannot encode myeline.track.v1 payload: 'latitude': 91 is outside -90...90")

        let (center, _) = Fixtures.center()
        let activity = try center.request(
            attributes: try Fixtures.attributes(),
            content: ActivityContent(state: .init(), staleDate: nil, relevanceScore: .nan))
        let start = try #require(await activity.events.first(1).first)
        let envelope = try #require(ActivityEnvelope(event: start, device: device))
        let notANumber = #expect(throws: ActivityError.self) { try WireCodec.encode(envelope) }
        #expect(
            notANumber?.message
                == "cannot encode myeline.activity.v1 payload: 'relevance-score': "
                + "Unable to encode Double.nan directly in JSON.")
    }

    @Test("a track point needs a position and a fix time")
    func trackPointFromState() throws {
        let device = try Fixtures.device()
        var state = Fixtures.fullState
        state.fixTime = nil
        #expect(TrackPoint(device: device, activity: "trip-1", seq: 1, state: state) == nil)
        #expect(TrackPoint(device: device, activity: "trip-1", seq: 1, state: .init()) == nil)
    }

    @Test("commands check their id and activity when created")
    func commandChecks() {
        let empty = #expect(throws: ActivityError.self) {
            try Command(id: "", intent: .report, timestamp: Fixtures.t0)
        }
        #expect(empty?.code == .invalidCommandID)
        #expect(empty?.message == "invalid command id \"\": must have 1-128 characters, not 0")
        #expect(throws: ActivityError.self) {
            try Command(id: String(repeating: "x", count: 129), intent: .report, timestamp: Fixtures.t0)
        }
        let activity = #expect(throws: ActivityError.self) {
            try Command(id: "req-1", intent: .stop, activity: "Trip 1", timestamp: Fixtures.t0)
        }
        #expect(activity?.code == .invalidActivityID)
    }

    @Test func anOrphanEnvelopeEndsWithTheNextSeqAndItsContent() async throws {
        let samples = try await WireSample.all()
        let sample = try #require(samples.first { $0.name == "envelope-update-alert" })
        let update = try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: sample.data)
        let end = update.ended(at: Fixtures.t0.addingTimeInterval(600))
        #expect(end.header.event == .end)
        #expect(end.header.seq == update.header.seq + 1)
        #expect(end.header.activity == update.header.activity)
        #expect(end.content == update.content)
        #expect(end.dismissalDate == Fixtures.t0.addingTimeInterval(600))
        #expect(end.timestamp == Fixtures.t0.addingTimeInterval(600))
        #expect(end.alert == nil)
        let decoded = try WireCodec.decode(
            ActivityEnvelope<LocationActivityAttributes>.self, from: try WireCodec.encode(end))
        #expect(decoded == end)
    }

    @Test(
        "nesting is measured outside strings only, without recursion",
        arguments: [
            ("[]", nil), ("{}", nil), (#""\#(String(repeating: "[", count: 100))""#, nil),
            (#""\"["#, nil), (String(repeating: "]", count: 100) + String(repeating: "[", count: 64), nil),
            (String(repeating: "[", count: 64), nil), (String(repeating: "[", count: 65), 64),
            (String(repeating: "{\"a\":", count: 65), 5 * 64), (#"["\\"#, nil),
            (#"[""# + String(repeating: "[", count: 70), nil),
            (String(repeating: "[", count: 64) + #""\\""# + "[", 68),
        ] as [(String, Int?)])
    func excessiveNesting(_ text: String, _ offset: Int?) {
        #expect(WireCodec.excessiveNesting(in: Array(text.utf8)) == offset)
    }

    @Test func theIDOfAnUndecodableCommandIsReadWhenValid() throws {
        #expect(Command.requestID(in: Data(#"{"id":"req-9","intent":"fly"}"#.utf8)) == "req-9")
        #expect(Command.requestID(in: Data(#"{"id":"","intent":"stop"}"#.utf8)) == nil)
        #expect(Command.requestID(in: Data(#"{"id":7}"#.utf8)) == nil)
        #expect(Command.requestID(in: Data("not json".utf8)) == nil)
        #expect(Command.requestID(in: Data(#"{"intent":"stop"}"#.utf8)) == nil)
        // Nested deeper than the contract allows: not read at all (JSONDecoder recurses per level).
        let nested = { (depth: Int) in
            Data(
                (#"{"id":"req-9","x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                    + "}").utf8)
        }
        #expect(Command.requestID(in: nested(WireCodec.maximumNesting - 1)) == "req-9")
        #expect(Command.requestID(in: nested(WireCodec.maximumNesting)) == nil)
        let refusal = CommandResult.malformed(id: "req-9", error: "unknown intent", timestamp: Fixtures.t0)
        let json = String(decoding: try WireCodec.encode(refusal), as: UTF8.self)
        #expect(!json.contains(#""intent":"#))
        #expect(try WireCodec.decode(CommandResult.self, from: Data(json.utf8)) == refusal)
        #expect(!refusal.ok)
    }
}
