import AgentCore
import Foundation
import LiveActivity
import Testing

@Suite("AgentCore: intents")
struct AgentCoreIntentTests {
    /// One command after a start (autostart: activity `a1` runs) and optional earlier commands.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var before: [AgentCore.Event] = []
        var command: AgentCore.Event
        /// The reply's activity, or its error's start.
        var activity: String?
        var error: String?
        /// The envelopes published for the command.
        var envelopes: [String]
        var settings = Script.settings()
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(
            name: "start while one runs answers with it", command: Script.command(.start), activity: "a1",
            envelopes: []),
        Row(
            name: "start new starts another", command: Script.command(.start, new: true), activity: "a2",
            envelopes: ["a2 start 1"]),
        Row(
            name: "start with a chosen id", command: Script.command(.start, activity: "trip-9", new: true),
            activity: "trip-9", envelopes: ["trip-9 start 1"]),
        Row(
            name: "start of the running id answers with it", command: Script.command(.start, activity: "a1"),
            activity: "a1", envelopes: []),
        Row(
            name: "stop ends and clears (immediate dismissal)", command: Script.command(.stop), activity: "a1",
            envelopes: ["a1 end 2", "a1 clear"]),
        Row(
            name: "stop with a delayed dismissal ends, clears later", command: Script.command(.stop),
            activity: "a1", envelopes: ["a1 end 2"], settings: Script.settings(dismissal: .after(seconds: 5))),
        Row(
            name: "pause publishes the paused state", command: Script.command(.pause), activity: "a1",
            envelopes: ["a1 update 2"]),
        Row(
            name: "resume of a paused trip publishes it running", before: [Script.command(.pause, id: "c0")],
            command: Script.command(.resume), activity: "a1", envelopes: ["a1 update 3"]),
        Row(
            name: "report republishes the activity", command: Script.command(.report), activity: "a1",
            envelopes: ["a1 update 2"]),
        Row(
            name: "stop of an unknown activity is refused", command: Script.command(.stop, activity: "nope"),
            error: "no running activity \"nope\"", envelopes: []),
        Row(
            name: "new on stop is refused", command: Script.command(.stop, new: true),
            error: "\"new\" applies to start only", envelopes: []),
        Row(
            name: "stop with nothing running is refused", before: [Script.command(.stop, id: "c0")],
            command: Script.command(.stop), error: "no activity is running", envelopes: []),
        Row(
            name: "start beyond the limit is refused", command: Script.command(.start, new: true),
            error: "cannot start activity \"a2\": 1 activities are live, the maximum is 1", envelopes: [],
            settings: Script.settings(maximumActivities: 1)),
        Row(
            name: "an ended activity counts until it is cleared",
            before: [Script.command(.stop, id: "c0")], command: Script.command(.start),
            error: "cannot start activity \"a2\": 1 activities are live", envelopes: [],
            settings: Script.settings(dismissal: .after(seconds: 60), maximumActivities: 1)),
    ])
    func command(_ row: Row) {
        var script = Script(row.settings)
        script.start()
        for (offset, event) in row.before.enumerated() { script.at(1 + Double(offset), event) }
        let actions = script.at(10, row.command)
        #expect(actions.envelopes == row.envelopes)
        let reply = actions.replies.last
        #expect(actions.replies.count == 1)
        if let error = row.error {
            #expect(reply?.ok == false)
            #expect(reply?.error?.hasPrefix(error) == true, "\(reply?.error ?? "-")")
        } else {
            #expect(reply?.ok == true, "\(reply?.error ?? "-")")
            #expect(reply?.activity == row.activity)
        }
        // What a command changed is saved and published before its reply.
        let replyIndex = actions.firstIndex { if case .publish(.reply) = $0 { true } else { false } }
        let lastEnvelope = actions.lastIndex {
            if case .publish(.envelope) = $0 { true } else if case .publish(.clear) = $0 { true } else { false }
        }
        if let lastEnvelope { #expect(lastEnvelope < replyIndex ?? 0) }
    }

    @Test func aMalformedCommandIsRefusedWithItsIdWhenOneCanBeRead() {
        var script = Script()
        script.start()
        let actions = script.at(1, .malformedCommand(id: "c9", reason: "missing intent"))
        #expect(actions.replies.map(\.id) == ["c9"])
        #expect(actions.replies.first?.ok == false)
        #expect(actions.logs(.warning) == ["agent.command.malformed"])
        #expect(script.at(2, .malformedCommand(id: nil, reason: "not JSON")).replies.isEmpty)
    }

    /// Failure 5 of the agent-core issue: `report` republished `online` with a new `since`, so
    /// "online since" meant "last report".
    @Test func reportLeavesTheStatusSinceAtTheConnection() {
        var script = Script()
        script.start()
        let connected = script.at(5, .connected(sessionPresent: false)).statuses
        #expect(connected.map(\.since) == [Script.epoch + 5])
        let reported = script.at(100, Script.command(.report)).statuses
        #expect(reported.map(\.since) == [Script.epoch + 5])
        #expect(reported.map(\.state) == [.online])
        // A new connection is a new `since`.
        script.at(200, .disconnected(sessionTakenOver: false))
        #expect(script.at(230, .connected(sessionPresent: true)).statuses.map(\.since) == [Script.epoch + 230])
    }

    /// An ended activity's envelope carries MQTT 5's message expiry at its dismissal date, so that
    /// the broker clears it even when the agent has exited (failure 4); not on MQTT 3.1.1.
    @Test(arguments: [(true, UInt32(6)), (false, nil)] as [(Bool, UInt32?)])
    func theEndCarriesItsDismissalAsMessageExpiry(mqtt5: Bool, expiry: UInt32?) {
        var script = Script(Script.settings(dismissal: .after(seconds: 5), messageExpiry: mqtt5))
        script.start()
        let ended = script.at(10, Script.command(.stop)).published
        guard case .envelope(let envelope, let sent)? = ended.first else {
            Issue.record("no end envelope: \(ended)")
            return
        }
        #expect(envelope.header.event == .end)
        #expect(envelope.dismissalDate == Script.epoch + 15)
        #expect(sent == expiry)
        // The agent clears it itself at the dismissal date if it still runs.
        #expect(script.core.nextDeadline == Script.epoch + 15)
        #expect(script.at(15, .tick).envelopes == ["a1 clear"])
    }
}
