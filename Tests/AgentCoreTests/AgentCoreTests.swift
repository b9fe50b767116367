import AgentCore
import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Location
import Testing
import Tracking

typealias Script = CoreScript

@Suite("AgentCore: start and resume")
struct AgentCoreStartTests {
    @Test func autostartStartsAnActivityWhoseRecordIsSavedBeforeItsStartIsPublished() throws {
        var script = Script()
        let actions = script.start()
        #expect(actions.envelopes == ["a1 start 1"])
        #expect(actions.savedRecords.map(\.lastSeq) == [1])
        // The record is saved first: the persist comes before the publish.
        let persist = actions.firstIndex { if case .persist = $0 { true } else { false } }
        let publish = actions.firstIndex { if case .publish = $0 { true } else { false } }
        #expect(try #require(persist) < #require(publish))
        #expect(script.core.activities.map(\.id) == ["a1"])
    }

    @Test func withoutAutostartNothingStartsUntilACommand() {
        var script = Script(Script.settings(autostart: false))
        let actions = script.start()
        #expect(actions.envelopes.isEmpty)
        #expect(actions.logs(.info) == ["agent.autostart.off"])
        let started = script.at(1, Script.command(.start))
        #expect(started.envelopes == ["a1 start 1"])
        #expect(started.replies.map(\.activity) == ["a1"])
    }

    static func record(
        _ id: String, lastSeq: Int, trackSeq: Int, dismissal: Date? = nil, device: DeviceID = Script.device,
        snapshot: TripAccumulator.Snapshot = .init(distance: 1_434, elapsed: 60)
    ) -> AgentCore.Record {
        AgentCore.Record(
            activityID: id, attributesType: LocationActivityAttributes.typeName, lastSeq: lastSeq, trackSeq: trackSeq,
            attributes: LocationActivityAttributes(deviceID: device, name: "Van 7"),
            tripTotals: try! JSONEncoder().encode(snapshot), startedAt: Script.epoch - 600, dismissalDate: dismissal)
    }

    static func outboxPoint(_ activity: String, seq: Int, index: UInt64) -> OutboxRecord {
        let point = TrackPoint(fix: Script.fix(Double(seq)), device: Script.device, activity: activity, seq: seq)
        return OutboxRecord(
            index: index, topic: Script.topics.track(device: Script.device, activityID: activity),
            payload: Array(try! WireCodec.encode(point)))
    }

    /// A crash between appending a batch's points and saving its record: the outbox holds points
    /// 11 and 12, the record says 10. The resumed activity goes on at 13, never reusing a seq.
    @Test func aResumeAfterACrashTakesTheTrackSeqFromTheOutboxWhenItIsAhead() {
        var script = Script()
        let actions = script.start(
            saved: [Self.record("trip", lastSeq: 5, trackSeq: 10)],
            outbox: [
                Self.outboxPoint("trip", seq: 11, index: 0), Self.outboxPoint("other", seq: 40, index: 1),
                Self.outboxPoint("trip", seq: 12, index: 2),
            ])
        // Resumed, not a new activity: autostart sees it running. Its first event follows seq 5.
        #expect(actions.envelopes == ["trip update 6"])
        #expect(actions.savedRecords.map(\.trackSeq) == [12])
        #expect(actions.envelopeValues.first?.content.state.distance == 1_434)
        #expect(actions.envelopeValues.first?.content.state.latitude == nil)
        let located = script.at(1, Script.location(1))
        #expect(located.points.map(\.seq) == [13])
        #expect(located.envelopes == ["trip update 7"])
    }

    @Test func aResumeWithTheRecordAheadKeepsTheRecordsSeq() {
        var script = Script()
        let actions = script.start(
            saved: [Self.record("trip", lastSeq: 2, trackSeq: 30)], outbox: [Self.outboxPoint("trip", seq: 7, index: 0)]
        )
        #expect(actions.savedRecords.map(\.trackSeq) == [30])
    }

    @Test func aSavedActivityOfAnotherDeviceIsIgnored() {
        var script = Script()
        let actions = script.start(saved: [Self.record("x", lastSeq: 2, trackSeq: 0, device: try! DeviceID("truck-2"))])
        #expect(actions.logs(.warning) == ["agent.saved.ignored"])
        // Autostart then starts a new one.
        #expect(actions.envelopes == ["a1 start 1"])
    }

    /// Ended before the restart, with a dismissal date still ahead: cleared at that date, then forgotten.
    @Test func anActivityEndedBeforeARestartIsClearedAtItsDismissalDateAndItsRecordRemoved() {
        var script = Script(Script.settings(autostart: false))
        let dismissal = Script.epoch + 30
        script.start(saved: [Self.record("old", lastSeq: 9, trackSeq: 4, dismissal: dismissal)])
        #expect(script.core.nextDeadline == dismissal)
        #expect(script.at(29, .tick).envelopes.isEmpty)
        #expect(script.at(30, .tick).envelopes == ["old clear"])
        // A retained envelope of it seen meanwhile is not an orphan.
        #expect(script.at(31, .retained(activityID: "old", payload: [1])).envelopes.isEmpty)
        #expect(script.at(32, .cleared(activityID: "old")).has(.removeState(activityID: "old")))
        #expect(script.core.pendingClears.isEmpty)
    }

    @Test func aDismissalDateAlreadyPastIsClearedAtTheFirstTick() {
        var script = Script(Script.settings(autostart: false))
        script.start(saved: [Self.record("old", lastSeq: 9, trackSeq: 4, dismissal: Script.epoch - 60)])
        #expect(script.at(0, .tick).envelopes == ["old clear"])
    }
}

@Suite("AgentCore: orphans")
struct AgentCoreOrphanTests {
    /// The retained envelope of an activity of this device that this agent does not know.
    static func envelope(_ id: String, ending: Bool = false) -> [UInt8] {
        var model = ActivityModel(
            id: id, attributes: LocationActivityAttributes(deviceID: Script.device, name: "Van 7"),
            content: ActivityContent(state: .init(distance: 5, elapsed: 5, paused: false), staleDate: nil),
            now: Script.epoch)
        var event = model.lastEvent
        if ending {
            let changes = try! model.end(nil, dismissalPolicy: .default, now: Script.epoch)
            for case .event(let end) in changes { event = end }
        }
        return Array(try! WireCodec.encode(ActivityEnvelope(event: event, device: Script.device)!))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var payload: [UInt8]
        var activity = "stray"
        var conflict = false
        var expected: [String]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(
            name: "an unknown running activity is ended, then cleared", payload: envelope("stray"),
            expected: ["stray end 2", "stray clear"]),
        Row(
            name: "an unknown ended activity is cleared", payload: envelope("stray", ending: true),
            expected: ["stray clear"]),
        Row(
            name: "an undecodable retained message is cleared", payload: Array("{\"x\":1}".utf8),
            expected: ["stray clear"]),
        Row(name: "an empty retained message is nothing", payload: [], expected: []),
        Row(
            name: "an activity of another attributes type is a program's, left alone",
            payload: Array(
                (#"{"activity":"stray","attributes":{"label":"bay 3"},"attributes-type":"com.example.pin","#
                    + #""content-state":{"count":2},"device":"van-7","event":"update","relevance-score":0,"#
                    + #""schema":"myeline.activity.v1","seq":2,"timestamp":1767225600}"#).utf8),
            expected: []),
        Row(name: "this agent's own activity is known", payload: envelope("a1"), activity: "a1", expected: []),
        Row(
            name: "with another agent on this device id, nothing is ended", payload: envelope("stray"),
            conflict: true, expected: []),
    ])
    func retainedMessages(_ row: Row) {
        var script = Script()
        script.start()
        // Two takeovers: a second agent (AgentCorePresenceTests).
        if row.conflict { script.at(1, .disconnected(sessionTakenOver: true), .disconnected(sessionTakenOver: true)) }
        let actions = script.at(2, .retained(activityID: row.activity, payload: row.payload))
        #expect(actions.envelopes == row.expected)
        // Seen again (the next subscription): nothing more.
        #expect(script.at(3, .retained(activityID: row.activity, payload: row.payload)).envelopes.isEmpty)
    }

    @Test func aClearedOrphanIsForgottenAndHasNoRecordToRemove() {
        var script = Script()
        script.start()
        script.at(1, .retained(activityID: "stray", payload: Self.envelope("stray")))
        #expect(script.at(2, .cleared(activityID: "stray")).isEmpty)
        // Still known: its retained copy seen again is not ended twice.
        #expect(script.at(3, .retained(activityID: "stray", payload: Self.envelope("stray"))).isEmpty)
    }
}
