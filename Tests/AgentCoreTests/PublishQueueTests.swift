import AgentCore
import Foundation
import LiveActivity
import Testing

@Suite("PublishQueue")
struct PublishQueueTests {
    /// The envelope of `activity`'s event `event` numbered `seq` (an update or an end, seq 2 or more).
    static func envelope(_ activity: String, _ event: EnvelopeEvent, seq: Int) -> AgentCore.Outgoing {
        let attributes = LocationActivityAttributes(deviceID: Script.device, name: "Van 7")
        let content = ActivityContent(
            state: LocationActivityAttributes.ContentState(distance: 0, elapsed: 0, paused: false), staleDate: nil)
        var model = ActivityModel(
            id: activity, attributes: attributes, content: content, now: Script.epoch,
            resumingAfter: event == .end ? seq - 2 : seq - 1)
        var last = model.lastEvent
        if event == .end {
            for case .event(let end) in try! model.end(nil, dismissalPolicy: .default, now: Script.epoch) { last = end }
        }
        return .envelope(ActivityEnvelope(event: last, device: Script.device)!, expiry: nil)
    }

    static func status(_ seconds: Double) -> AgentCore.Outgoing {
        .status(.online(device: Script.device, since: Script.epoch + seconds))
    }

    static func names(_ messages: [AgentCore.Outgoing]) -> [String] {
        messages.map { message in
            switch message {
            case .envelope(let envelope, _):
                "\(envelope.header.activity) \(envelope.header.event.rawValue) \(envelope.header.seq)"
            case .clear(let activity): "\(activity) clear"
            case .status(let status): "status \(Int(status.since!.timeIntervalSince(Script.epoch)))"
            case .reply(let result): "reply \(result.id)"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var messages: [AgentCore.Outgoing]
        var connected: Bool
        var waiting: [String]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Row(
            name: "connected, every update waits its turn",
            messages: [envelope("a", .update, seq: 2), envelope("a", .update, seq: 3), envelope("a", .update, seq: 4)],
            connected: true, waiting: ["a update 3", "a update 4"]),
        Row(
            name: "offline, the newest update replaces the one waiting",
            messages: [envelope("a", .update, seq: 2), envelope("a", .update, seq: 3), envelope("a", .update, seq: 4)],
            connected: false, waiting: ["a update 4"]),
        Row(
            name: "offline, an end is never replaced and nothing overtakes it",
            messages: [
                envelope("a", .update, seq: 2), envelope("a", .update, seq: 3), envelope("a", .end, seq: 4),
                .clear(activityID: "a"),
            ],
            connected: false, waiting: ["a update 3", "a end 4", "a clear"]),
        Row(
            name: "offline, updates of two activities are kept apart",
            messages: [
                .clear(activityID: "x"), envelope("a", .update, seq: 2), envelope("b", .update, seq: 7),
                envelope("a", .update, seq: 3), envelope("b", .update, seq: 8),
            ],
            connected: false, waiting: ["a update 3", "b update 8"]),
        Row(
            name: "offline, the status keeps only the newest",
            messages: [status(1), status(2), status(3)], connected: false, waiting: ["status 3"]),
        Row(
            name: "offline, replies are never replaced",
            messages: [
                .reply(.malformed(id: "c1", error: "x", timestamp: Script.epoch)),
                .reply(.malformed(id: "c2", error: "x", timestamp: Script.epoch)),
                .reply(.malformed(id: "c3", error: "x", timestamp: Script.epoch)),
            ],
            connected: false, waiting: ["reply c2", "reply c3"]),
    ])
    func enqueue(_ row: Row) {
        var queue = PublishQueue()
        // The first goes in flight at once; the rest come while it waits for the broker.
        queue.enqueue(row.messages[0], connected: row.connected)
        #expect(queue.next() == row.messages.first)
        for message in row.messages.dropFirst() { queue.enqueue(message, connected: row.connected) }
        #expect(Self.names(queue.pending) == row.waiting)
    }

    @Test func aSlowLinkCoalescesOnceTheBacklogIsReached() {
        var queue = PublishQueue()
        queue.enqueue(.clear(activityID: "x"), connected: true)
        _ = queue.next()
        // Connected, but the broker does not keep up: three more updates than the backlog.
        for seq in 2..<(PublishQueue.backlog + 5) {
            queue.enqueue(Self.envelope("a", .update, seq: seq), connected: true)
        }
        #expect(queue.pending.count == PublishQueue.backlog)
        #expect(queue.replaced == 3)
        #expect(Self.names(queue.pending).last == "a update \(PublishQueue.backlog + 4)")
    }

    @Test func oneInFlightAtATimeUntilDone() {
        var queue = PublishQueue()
        queue.enqueue(.clear(activityID: "a"), connected: true)
        queue.enqueue(.clear(activityID: "b"), connected: true)
        #expect(queue.next() == .clear(activityID: "a"))
        #expect(queue.next() == nil)
        #expect(!queue.isEmpty)
        queue.done()
        #expect(queue.next() == .clear(activityID: "b"))
        queue.done()
        #expect(queue.isEmpty)
    }
}
