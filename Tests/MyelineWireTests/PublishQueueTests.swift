import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

@Suite("PublishQueue")
struct PublishQueueTests {
    static let wire = ActivityWire(device: try! Fixtures.device())

    /// The envelope of `activity`'s event `event` numbered `seq` (an update or an end, seq 2 or more).
    static func envelope(_ activity: String, _ event: EnvelopeEvent, seq: Int) -> WireMessage {
        let attributes = LocationActivityAttributes(deviceID: wire.device, name: "Van 7")
        let content = ActivityContent(
            state: LocationActivityAttributes.ContentState(distance: 0, elapsed: 0, paused: false), staleDate: nil)
        var model = ActivityModel(
            id: activity, attributes: attributes, content: content, now: Fixtures.t0,
            resumingAfter: event == .end ? seq - 2 : seq - 1)
        var last = model.lastEvent
        if event == .end {
            for case .event(let end) in try! model.end(nil, dismissalPolicy: .default, now: Fixtures.t0) { last = end }
        }
        return try! wire.message(for: last)
    }

    static func clear(_ activity: String) -> WireMessage { wire.clear(activityID: activity) }

    static func status(_ seconds: Double) -> WireMessage {
        try! wire.message(for: .online(device: wire.device, since: Fixtures.t0 + seconds))
    }

    static func reply(_ id: String) -> WireMessage {
        try! wire.message(for: .malformed(id: id, error: "x", timestamp: Fixtures.t0))
    }

    static func names(_ messages: [WireMessage]) -> [String] {
        messages.map { message in
            switch message.kind {
            case .envelope(let activity, let event, let seq): "\(activity) \(event.rawValue) \(seq)"
            case .clear(let activity): "\(activity) clear"
            case .status:
                "status \(Int(try! WireCodec.decode(StatusMessage.self, from: message.payload).since!.timeIntervalSince(Fixtures.t0)))"
            case .reply: "reply \(try! WireCodec.decode(CommandResult.self, from: message.payload).id)"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var messages: [WireMessage]
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
                clear("a"),
            ],
            connected: false, waiting: ["a update 3", "a end 4", "a clear"]),
        Row(
            name: "offline, updates of two activities are kept apart",
            messages: [
                clear("x"), envelope("a", .update, seq: 2), envelope("b", .update, seq: 7),
                envelope("a", .update, seq: 3), envelope("b", .update, seq: 8),
            ],
            connected: false, waiting: ["a update 3", "b update 8"]),
        Row(
            name: "offline, the status keeps only the newest",
            messages: [status(1), status(2), status(3)], connected: false, waiting: ["status 3"]),
        Row(
            name: "offline, replies are never replaced",
            messages: [
                reply("c1"),
                reply("c2"),
                reply("c3"),
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
        queue.enqueue(Self.clear("x"), connected: true)
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
        queue.enqueue(Self.clear("a"), connected: true)
        queue.enqueue(Self.clear("b"), connected: true)
        #expect(queue.next() == Self.clear("a"))
        #expect(queue.next() == nil)
        #expect(!queue.isEmpty)
        queue.done()
        #expect(queue.next() == Self.clear("b"))
        queue.done()
        #expect(queue.isEmpty)
    }
}
