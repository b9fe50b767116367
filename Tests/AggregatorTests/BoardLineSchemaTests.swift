import Board
import Foundation
import LiveActivity
import TestSupport
import Testing

/// docs/schema/board-line.json agrees with the board's JSON lines (finding 9): it accepts every
/// kind of line the board writes, and the examples in docs/aggregator.md, and rejects broken ones;
/// like the wire schemas, through scripts/validate-json.py.
@Suite(.timeLimit(.minutes(1)))
struct BoardLineSchemaTests {
    static let schema = "board-line.json"

    /// Lines of every kind, from the sample fleet with activities of other attributes types, and a
    /// device with every health issue.
    static func lines() throws -> [(String, String)] {
        var fleet = Wire.mixedFleet()
        fleet.apply(
            Wire.decoder.decode(
                topic: Wire.statusTopic(),
                payload: Wire.status(
                    state: "online",
                    extra: [
                        "clock-offset": 3600, "storage-error": "disk full", "dropped": 5, "instance": "i-1",
                        "power-losses": 2,
                    ])),
            now: Wire.now)
        var lines: [(String, String)] = []
        for row in fleet.rows.values.sorted(by: { $0.key < $1.key }) {
            let state = fleet.state(of: row, at: Wire.now)
            lines.append(("activity \(row.key.device)", BoardJSON.row(row, state: state, fleet: fleet)))
            lines.append(
                ("updated \(row.key.device)", BoardJSON.row(row, state: state, change: "updated", fleet: fleet)))
            lines.append(("state without health \(row.key.device)", BoardJSON.row(row, state: state, change: "state")))
        }
        for device in fleet.devices.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            lines.append(("device \(device)", BoardJSON.device(device, fleet: fleet)))
            lines.append(("status \(device)", BoardJSON.device(device, fleet: fleet, change: "status")))
        }
        // A pushed destination and status texts, hostile ones included.
        lines += try PushedDestinationAndStatusTests.jsonLines()
        lines.append(("removed", BoardJSON.removed(ActivityKey(device: try! DeviceID("van-7"), activity: "a1"))))
        lines.append(("follow summary", BoardJSON.summary(fleet, now: Wire.now, warning: "cut", dropped: 3)))
        lines.append(
            (
                "once summary",
                BoardJSON.summary(
                    fleet, now: Wire.now, warning: nil,
                    completeness: .init(connected: true, isComplete: true, retained: 12), change: nil)
            ))
        lines.append(
            (
                "unreachable summary",
                BoardJSON.summary(
                    Fleet(), now: Wire.now, warning: nil,
                    completeness: .init(connected: false, isComplete: false, retained: 0, error: "refused"),
                    change: nil)
            ))
        return lines
    }

    /// The ```json blocks of docs/aggregator.md, one line each.
    static func documentedExamples() throws -> [String] {
        let page = try String(
            contentsOf: repositoryDirectory.appendingPathComponent("docs/aggregator.md"), encoding: .utf8)
        var examples: [String] = []
        var inBlock = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```json" {
                inBlock = true
            } else if line == "```" {
                inBlock = false
            } else if inBlock, line.hasPrefix("{") {
                examples.append(String(line))
            }
        }
        return examples
    }

    static let invalid: [(String, String)] = [
        ("no kind", #"{"device":"van-7"}"#),
        ("unknown kind", #"{"kind":"truck"}"#),
        ("activity without state", #"{"kind":"activity","device":"van-7","activity":"a1"}"#),
        (
            "device with empty issues",
            #"{"activities":0,"device":"van-7","healthy":false,"issues":[],"kind":"device","status":"online"}"#
        ),
        (
            "device with an unknown link",
            #"{"activities":0,"device":"van-7","healthy":true,"kind":"device","status":"up"}"#
        ),
        ("removed without activity", #"{"change":"removed","device":"van-7","kind":"removed"}"#),
        (
            "location activity without type",
            #"{"activity":"a1","distance":0,"elapsed":0,"event":"start","fix":"none","kind":"activity","name":"Van 7","paused":false,"relevance-score":0,"seq":1,"device":"van-7","state":"active","timestamp":1700000000}"#
        ),
        (
            "location activity with content",
            #"{"activity":"a1","content":{"a":1},"distance":0,"elapsed":0,"event":"start","fix":"none","kind":"activity","name":"Van 7","paused":false,"relevance-score":0,"seq":1,"device":"van-7","state":"active","timestamp":1700000000,"type":"location"}"#
        ),
        (
            "other type without content",
            #"{"activity":"pin-1","device":"van-7","event":"update","kind":"activity","name":"pin-1","relevance-score":0,"seq":2,"state":"active","timestamp":1700000030,"type":"com.example.pin"}"#
        ),
        (
            "other type with a location key",
            #"{"activity":"pin-1","content":{"count":2},"device":"van-7","event":"update","kind":"activity","latitude":52.5,"name":"pin-1","relevance-score":0,"seq":2,"state":"active","timestamp":1700000030,"type":"com.example.pin"}"#
        ),
        (
            "other type with a status text",
            #"{"activity":"pin-1","content":{"count":2},"device":"van-7","event":"update","kind":"activity","name":"pin-1","relevance-score":0,"seq":2,"state":"active","status-text":"Loading","timestamp":1700000030,"type":"com.example.pin"}"#
        ),
        (
            "location activity with a status text that is not a string",
            #"{"activity":"a1","distance":0,"elapsed":0,"event":"start","fix":"none","kind":"activity","name":"Van 7","paused":false,"relevance-score":0,"seq":1,"device":"van-7","state":"active","status-text":7,"timestamp":1700000000,"type":"location"}"#
        ),
        (
            "other type with a nested content value",
            #"{"activity":"pin-1","content":{"count":{"n":2}},"device":"van-7","event":"update","kind":"activity","name":"pin-1","relevance-score":0,"seq":2,"state":"active","timestamp":1700000030,"type":"com.example.pin"}"#
        ),
        (
            "summary with an undocumented key",
            #"{"kind":"summary","activities":0,"rejected":0,"missed":0,"dropped":0,"resynced":0,"devices":0,"devices-offline":0,"devices-unhealthy":0,"mood":"fine"}"#
        ),
    ]

    @Test func theSchemaAcceptsTheBoardsLinesAndTheDocumentedOnes() async throws {
        let examples = try Self.documentedExamples()
        #expect(examples.count >= 4, "docs/aggregator.md shows a line of each kind")
        var cases = try Self.lines().map {
            JSONSchemaCase(name: $0.0, schema: Self.schema, data: Data($0.1.utf8), valid: true)
        }
        cases += examples.enumerated().map {
            JSONSchemaCase(
                name: "docs/aggregator.md example \($0.offset + 1)", schema: Self.schema, data: Data($0.element.utf8),
                valid: true)
        }
        cases += Self.invalid.map {
            JSONSchemaCase(name: "invalid: \($0.0)", schema: Self.schema, data: Data($0.1.utf8), valid: false)
        }
        let results = try await validateJSON(cases)
        #expect(results.count == cases.count, "\(results.joined(separator: "\n"))")
        for line in results where !line.hasPrefix("PASS\t") { Issue.record("unexpected result: \(line)") }
    }
}
