import Board
import Foundation
import LiveActivity
import TestSupport
import Testing

/// Activities of an attributes type the board has no columns for (docs/topics.md, attributes
/// types): valid envelopes, shown generically (type, name, state, age, the content's top-level
/// values) with the envelope rules of every activity; bad ones rejected with a reason.
struct OtherAttributesTypeTests {
    static let pinKey = ActivityKey(device: try! DeviceID("van-7"), activity: "pin-1")

    /// Issue 18: a `com.example.pin` envelope (docs/topics.md's example) was counted as rejected and
    /// never shown; it is a row, with its type, a name and its content's values.
    @Test func aPinIsShownNotRejected() throws {
        var fleet = Fleet()
        let change = Wire.apply(&fleet, Wire.otherEnvelope())
        #expect(change == .updated(Self.pinKey))
        #expect(fleet.rejectedCount == 0)
        let row = try #require(fleet.rows[Self.pinKey])
        #expect(row.attributesType == "com.example.pin")
        #expect(row.name == "pin-1", "no name in its attributes: the activity id")
        #expect(row.content == nil && row.attributes == nil)
        #expect(
            row.generic?.fields == [
                .init(key: "count", value: .number(2)), .init(key: "note", value: .string("two pallets waiting")),
            ])
        #expect(fleet.state(of: row, at: Wire.now) == .active)
        #expect(fleet.devices[Self.pinKey.device]?.lastSeen == Date(timeIntervalSince1970: 1_700_000_030))

        let line = BoardJSON.row(row, state: .active, fleet: fleet)
        #expect(line.contains(#""content":{"count":2,"note":"two pallets waiting"}"#))
        #expect(line.contains(#""type":"com.example.pin""#) && line.contains(#""name":"pin-1""#))
        for locationKey in ["fix", "distance", "elapsed", "paused", "latitude"] {
            #expect(!line.contains("\"\(locationKey)\":"), "\(locationKey) in \(line)")
        }
        let plain = PlainText.row(
            row, state: .active, status: nil, health: fleet.health(of: row.key.device), now: Wire.now)
        #expect(
            plain.hasSuffix(
                #"van-7/pin-1 ACTIVE pin-1 · type com.example.pin, updated 1m ago · count=2, note="two pallets waiting""#
            ),
            "\(plain)")
    }

    /// The name shown: the attributes' `name` when it is a string, else the activity id.
    @Test(arguments: [
        (#"{"name":"Walk","goal":5000}"#, "Walk"), (#"{"name":7}"#, "walk"), (#"{"name":{"first":"Walk"}}"#, "walk"),
        ("{}", "walk"),
    ])
    func theNameIsTheAttributesNameOrTheActivityID(attributes: String, expected: String) throws {
        var fleet = Fleet()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(attributes.utf8)) as? [String: Any])
        _ = Wire.apply(&fleet, Wire.otherEnvelope(activity: "walk", attributes: object))
        #expect(try #require(fleet.rows.values.first).name == expected)
    }

    /// The content's top-level strings, numbers and booleans, in the keys' order; nulls, objects and
    /// arrays left out, in the row and in the JSON line alike.
    @Test func onlyTopLevelScalarsAreShown() throws {
        var fleet = Fleet()
        _ = Wire.apply(
            &fleet,
            Wire.otherEnvelope(content: [
                "b": true, "a": -1.5, "z": "last", "nested": ["x": 1], "list": [1, 2], "nothing": NSNull(),
                "Upper": 1e300,
            ]))
        let row = try #require(fleet.rows[Self.pinKey])
        #expect(row.generic?.fields.map(\.key) == ["Upper", "a", "b", "z"])
        #expect(row.generic?.fieldsText == #"Upper=1e+300, a=-1.5, b=true, z="last""#)
        #expect(
            BoardJSON.row(row, state: .active).contains(#""content":{"Upper":1e+300,"a":-1.5,"b":true,"z":"last"}"#))
    }

    /// The rules of every activity apply: the latest `seq` wins, stale from `stale-date` by the board's
    /// clock (never PAUSED: the board does not guess what a key means), ENDED after `end`, removed at
    /// its `dismissal-date` or at the empty retained message; the header and the summary count it.
    @Test func seqStalenessAndDismissalApplyAsToAnyActivity() throws {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(device: "van-7", activity: "a1", timestamp: 1_700_000_090))
        _ = Wire.apply(
            &fleet, Wire.otherEnvelope(seq: 3, stale: 1_700_000_160, content: ["count": 3, "paused": true]))
        #expect(Wire.apply(&fleet, Wire.otherEnvelope(seq: 2)) == .unchanged, "an older seq is dropped")
        #expect(fleet.outdatedCount == 1)
        #expect(fleet.rows[Self.pinKey]?.generic?.fields.first == .init(key: "count", value: .number(3)))
        #expect(fleet.rows[Self.pinKey].map { fleet.state(of: $0, at: Wire.now) } == .active)
        let later = Wire.now.addingTimeInterval(60)
        #expect(fleet.rows[Self.pinKey].map { fleet.state(of: $0, at: later) } == .stale)
        #expect(fleet.counts(at: later) == [.active: 1, .stale: 1])
        #expect(BoardJSON.summary(fleet, now: later, warning: nil).contains(#""activities":2,"#))
        #expect(BoardJSON.summary(fleet, now: later, warning: nil).contains(#""stale":1"#))

        _ = Wire.apply(
            &fleet, Wire.otherEnvelope(seq: 4, event: "end", timestamp: 1_700_000_100, dismissal: 1_700_000_400))
        #expect(fleet.rows[Self.pinKey].map { fleet.state(of: $0, at: later) } == .ended)
        #expect(fleet.removeDismissed(now: Date(timeIntervalSince1970: 1_700_000_399)).isEmpty)
        #expect(fleet.removeDismissed(now: Date(timeIntervalSince1970: 1_700_000_400)) == [Self.pinKey])
        #expect(fleet.rows[Self.pinKey] == nil && fleet.genericCount == 0)

        _ = Wire.apply(&fleet, Wire.otherEnvelope(seq: 5))
        #expect(fleet.genericCount == 1)
        let cleared = fleet.apply(
            Wire.decoder.decode(topic: Wire.activityTopic("van-7", "pin-1"), payload: []), now: later)
        #expect(cleared == .removed(Self.pinKey) && fleet.genericCount == 0)
    }

    /// An activity id that a later envelope gives another type is shown as that type, and the FIELDS
    /// column follows how many rows of other types there are.
    @Test func anActivityThatChangesTypeIsShownAsItsLatestType() throws {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.otherEnvelope(activity: "a1", seq: 1, event: "start"))
        #expect(fleet.genericCount == 1)
        _ = Wire.apply(&fleet, Wire.envelope(activity: "a1", seq: 2, event: "update", name: "Van 7"))
        let row = try #require(fleet.rows.values.first)
        #expect(row.attributesType == "location" && row.name == "Van 7" && fleet.genericCount == 0)
        _ = Wire.apply(&fleet, Wire.otherEnvelope(activity: "a1", seq: 3))
        #expect(fleet.rows.values.first?.attributesType == "com.example.pin" && fleet.genericCount == 1)
    }

    /// Bad envelopes of another type are rejected and counted, each with its reason; a `location`
    /// envelope is held to its own rules whatever other type's keys it carries.
    @Test(arguments: [
        ("location attributes of a pin", Wire.otherEnvelope(type: "location"), "missing key 'attributes.deviceID'"),
        (
            "content as array", Wire.otherEnvelope(content: [1, 2]),
            "attributes type com.example.pin: invalid myeline.activity.v1 payload: 'content-state': must be an object, not an array"
        ),
        ("content as string", Wire.otherEnvelope(content: "two"), "must be an object, not a string"),
        (
            "attributes as array", Wire.otherEnvelope(attributes: [:], extra: ["attributes": ["x"]]),
            "'attributes': must be an object, not an array"
        ),
        (
            "content over 4 KiB", Wire.otherEnvelope(content: ["note": String(repeating: "x", count: 4090)]),
            "attributes type com.example.pin: 'content-state' is 4101 bytes as JSON, over the 4096 bytes (4 KiB) a content state may take"
        ),
        (
            "an end without a dismissal date", Wire.otherEnvelope(event: "end", extra: ["dismissal-date": NSNull()]),
            "missing key 'dismissal-date'"
        ),
        (
            "of another device", Wire.otherEnvelope(device: "van-9"),
            "envelope of another device or activity than its topic"
        ),
    ])
    func badEnvelopesOfOtherTypesAreRejectedWithAReason(name: String, payload: [UInt8], reason: String) {
        var fleet = Fleet()
        let input = Wire.decoder.decode(topic: Wire.activityTopic("van-7", "pin-1"), payload: payload)
        guard case .rejected(let rejection) = fleet.apply(input, now: Wire.now) else {
            Issue.record("\(name) was applied")
            return
        }
        #expect(rejection.reason.contains(reason), "\(name): \(rejection.reason)")
        #expect(fleet.rejectedCount == 1 && fleet.rows.isEmpty)
    }

    /// The largest content state allowed, 4 KiB as the wire writes it, is shown.
    @Test func aContentOfExactly4KiBIsShown() {
        var fleet = Fleet()
        // {"note":"…"} is 11 bytes besides the text.
        let payload = Wire.otherEnvelope(content: ["note": String(repeating: "x", count: 4096 - 11)])
        #expect(Wire.apply(&fleet, payload, topic: Wire.activityTopic("van-7", "pin-1")) == .updated(Self.pinKey))
    }

    /// Every layout shows the other types: the compact one their type in LOCATION and, when there is
    /// room, a FIELDS column (golden frames); the frames of a fleet of `location` activities alone
    /// have no FIELDS column (FrameTests' golden files).
    @Test(arguments: [80, 120, 160])
    func compactFramesShowTheTypeAndTheFields(columns: Int) throws {
        var view = BoardView(sort: .device)
        let text =
            FrameRenderer(layout: .compact, columns: columns, lines: 15, colours: false)
            .render(Wire.mixedFleet(), view: &view, header: FrameTests.header, now: Wire.now)
            .joined(separator: "\n") + "\n"
        try FrameTests.expectGolden(text, "compact-other-types-\(columns)x15.txt")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { TerminalText.width($0) == columns })
        let walk = try #require(lines.first { $0.hasPrefix("walker-1") })
        #expect(walk.contains("com.example.steps"))
        #expect(walk.contains("distance=2340.5") == (columns >= 120), "\(walk)")
        #expect(lines[0].hasPrefix("MYELINE 7 activities: 3 active, 1 stale"))
    }

    @Test func theExpandedCardShowsTheTypeAndTheFields() throws {
        var view = BoardView(sort: .device)
        let text =
            FrameRenderer(layout: .expanded, columns: 120, lines: 60, colours: false)
            .render(Wire.mixedFleet(), view: &view, header: FrameTests.header, now: Wire.now)
            .joined(separator: "\n") + "\n"
        try FrameTests.expectGolden(text, "expanded-other-types-120x60.txt")
        #expect(text.contains("walker-1 · Walk"))
        #expect(text.contains("  type com.example.steps, updated 5s ago"))
        #expect(text.contains(#"  distance=2340.5, elapsedSeconds=1820, floors=3, isPaused=false, steps=3120"#))
    }

    /// A type's texts are made safe for the terminal like any other.
    @Test func escapesInAnotherTypesValuesAreShownHarmlessly() {
        var fleet = Fleet()
        _ = Wire.apply(
            &fleet,
            Wire.otherEnvelope(
                attributes: ["name": "Pin\u{1B}[2J"], content: ["note\u{1B}]0;x\u{7}": "a\u{9B}31mred"]))
        for layout in BoardLayout.allCases {
            var view = BoardView()
            let frame = FrameRenderer(layout: layout, columns: 160, lines: 20, colours: false)
                .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
            #expect(!frame.joined().contains("\u{1B}") && !frame.joined().contains("\u{9B}"), "\(layout)")
        }
    }
}
