import Foundation
import LiveActivity
import MyelineWire
import LiveActivityMQTT
import Locking
import Logging
import TestSupport
import Testing

/// `ActivityPublisher` on a sink that records what it is given: the messages of a center's or an
/// activity's events, in order, with seq, expiry and clear; none missed.
@Suite("ActivityPublisher", .timeLimit(.minutes(1)))
struct ActivityPublisherTests {
    typealias State = LocationActivityAttributes.ContentState

    /// A sink that hands every message to the test, always connected.
    final class RecordingSink: WireSink {
        let messages: AsyncStream<WireMessage>
        private let continuation: AsyncStream<WireMessage>.Continuation

        init() {
            (messages, continuation) = AsyncStream<WireMessage>.makeStream()
        }

        var isConnected: Bool { true }

        func publish(_ message: WireMessage) async throws {
            continuation.yield(message)
        }

        /// Ends `messages` after what was published.
        func finish() {
            continuation.finish()
        }
    }

    static let wire = ActivityWire(device: try! Fixtures.device())

    /// `count` messages published by a running publisher of `wire` while `body` acts.
    static func published(
        _ count: Int, following: (ActivityPublisher) -> Void = { _ in },
        _ body: (ActivityPublisher) async throws -> Void
    ) async throws -> [WireMessage] {
        let sink = RecordingSink()
        let publisher = ActivityPublisher(wire: wire, sink: sink, logger: Logger(label: "test"))
        following(publisher)
        return try await withThrowingTaskGroup { group in
            group.addTask { await publisher.run() }
            try await body(publisher)
            let messages = await sink.messages.first(count)
            group.cancelAll()
            return messages
        }
    }

    static func names(_ messages: [WireMessage]) -> [String] {
        messages.map { message in
            switch message.kind {
            case .envelope(let activity, let event, let seq): "\(activity) \(event.rawValue) \(seq)"
            case .clear(let activity): "\(activity) clear"
            case .status: "status"
            case .reply: "reply"
            }
        }
    }

    @Test("following a center before the request publishes every event: envelopes, the end's expiry, the clear")
    func followsCenter() async throws {
        let (center, clock) = Fixtures.center()
        let dismissal = Fixtures.t0 + 600
        let messages = try await Self.published(5, following: { $0.follow(center) }) { _ in
            let activity = try Fixtures.startActivity(in: center, id: "trip-1")
            try activity.update(ActivityContent(state: Fixtures.fullState, staleDate: nil))
            try activity.update(ActivityContent(state: State(distance: 5), staleDate: nil))
            clock.advance(by: 0.5)
            try activity.end(nil, dismissalPolicy: .after(dismissal))
            clock.set(to: dismissal)
        }

        #expect(
            Self.names(messages) == [
                "trip-1 start 1", "trip-1 update 2", "trip-1 update 3", "trip-1 end 4", "trip-1 clear",
            ])
        #expect(
            messages.map(\.messageExpiry) == [nil, nil, nil, 601, nil], "599.5 s rounded up, plus the broker's second")
        #expect(messages.map(\.retain) == [true, true, true, true, true])
        #expect(messages.last?.payload == [])
        #expect(Set(messages.map(\.topic)) == ["myeline/van-7/activities/trip-1"])
        let end = try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: messages[3].payload)
        #expect(end.dismissalDate == dismissal)
        #expect(end.content.state == State(distance: 5))
    }

    /// The events are queued before the call that made them returns, so a program's farewell
    /// (`withPublisher`: wait until empty, then `offline`) covers its last change; when a task
    /// followed the events later, the offline could go out before the end and the clear.
    @Test("a followed center's events are queued before the change returns, before run() has started")
    func queuedAtOnce() async throws {
        let (center, _) = Fixtures.center()
        let sink = RecordingSink()
        let publisher = ActivityPublisher(wire: Self.wire, sink: sink, logger: Logger(label: "test"))
        publisher.follow(center)
        let activity = try Fixtures.startActivity(in: center, id: "trip-5")
        try activity.end(nil, dismissalPolicy: .immediate)
        #expect(!publisher.isEmpty, "start, end and clear wait in the queue")
        await withDiscardingTaskGroup { group in
            group.addTask { await publisher.run() }
            #expect(await publisher.waitUntilEmpty(within: .seconds(30)))
            group.cancelAll()
        }
        sink.finish()
        #expect(Self.names(await sink.messages.collect()) == ["trip-5 start 1", "trip-5 end 2", "trip-5 clear"])
    }

    @Test("a publisher that follows an activity after its end still publishes its start and end, then the clear")
    func followsLate() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center, id: "trip-2")
        try activity.update(ActivityContent(state: Fixtures.fullState, staleDate: nil))
        try activity.end(nil, dismissalPolicy: .immediate)

        let messages = try await Self.published(4, following: { $0.follow(activity) }) { _ in }

        #expect(Self.names(messages) == ["trip-2 start 1", "trip-2 update 2", "trip-2 end 3", "trip-2 clear"])
    }

    @Test(
        "a center's events: the live activities' history, then every event of any type, later activities from their start"
    )
    func centerEventsOfAnyType() async throws {
        let (center, _) = Fixtures.center()
        let location = try Fixtures.startActivity(in: center, id: "trip-3")
        for distance in 1...5 {
            try location.update(ActivityContent(state: State(distance: Double(distance)), staleDate: nil))
        }
        let events = center.events

        let timer = try center.request(
            attributes: TimerAttributes(label: "break"),
            content: ActivityContent(state: TimerAttributes.ContentState(seconds: 900), staleDate: nil), id: "break-1")
        try timer.update(ActivityContent(state: TimerAttributes.ContentState(seconds: 899), staleDate: nil))
        try location.end(nil, dismissalPolicy: .immediate)
        let received = await events.first(6)

        #expect(
            received.map {
                "\($0.activityID) \($0.attributesType) \($0.seq) \($0.envelopeEvent?.rawValue ?? "dismissed")"
            } == [
                "trip-3 location 1 start", "trip-3 location 6 update", "break-1 timer 1 start",
                "break-1 timer 2 update",
                "trip-3 location 7 end", "trip-3 location 8 dismissed",
            ])
        #expect(
            received[3].event(as: TimerAttributes.self)?.kind
                == .update(
                    ActivityContent(state: TimerAttributes.ContentState(seconds: 899), staleDate: nil), alert: nil))
        #expect(received[3].event(as: LocationActivityAttributes.self) == nil)
    }

    @Test("an event that cannot be encoded is counted and the others go on")
    func unencodableEvent() async throws {
        let (center, _) = Fixtures.center()
        var publisher: ActivityPublisher?
        let published = try await Self.published(
            3,
            following: {
                publisher = $0
                $0.follow(center)
            }
        ) { _ in
            let activity = try Fixtures.startActivity(in: center, id: "trip-4")
            try activity.update(ActivityContent(state: State(), staleDate: nil, relevanceScore: .nan))
            try activity.update(ActivityContent(state: State(distance: 1), staleDate: nil))
            try activity.end(nil, dismissalPolicy: .immediate)
        }
        #expect(Self.names(published) == ["trip-4 start 1", "trip-4 update 3", "trip-4 end 4"])
        #expect(publisher?.failedCount == 1)
    }
}

/// `ActivityPublisher` on a sink that acknowledges through ``WireSink/publish(_:completion:)``
/// when the test says (as the MQTT client does from its network thread): one message in flight at
/// a time, the next when the first is done, a message sent again when the sink asks, a refusal
/// counted.
@Suite("ActivityPublisher with acknowledgements", .timeLimit(.minutes(1)))
struct ActivityPublisherAcknowledgementTests {
    /// A sink that hands each message and its completion to the test, which completes it.
    final class DeferredSink: WireSink {
        typealias Call = (message: WireMessage, completion: @Sendable ((any Error)?) -> Void)
        let calls: AsyncStream<Call>
        private let continuation: AsyncStream<Call>.Continuation

        init() {
            (calls, continuation) = AsyncStream<Call>.makeStream()
        }

        var isConnected: Bool { true }

        func publish(_ message: WireMessage) async throws {
            Issue.record("the publisher publishes through publish(_:completion:)")
        }

        func publish(_ message: WireMessage, completion: @escaping @Sendable ((any Error)?) -> Void) async {
            continuation.yield((message, completion))
        }
    }

    struct Refused: Error {}

    static func message(_ topic: String) -> WireMessage {
        WireMessage(kind: .status, topic: topic, payload: Array(topic.utf8))
    }

    @Test func oneInFlightSentAgainWhenAskedAndRefusalsCounted() async throws {
        let sink = DeferredSink()
        let delivered = Locked<[String]>([])
        let publisher = ActivityPublisher(
            wire: ActivityPublisherTests.wire, sink: sink, logger: Logger(label: "test")
        ) { message in delivered.withLock { $0.append(message.topic) } }
        publisher.enqueue(Self.message("a"))
        publisher.enqueue(Self.message("b"))
        try await withThrowingTaskGroup { group in
            group.addTask { await publisher.run() }
            var calls = sink.calls.makeAsyncIterator()
            let first = try #require(await calls.next())
            #expect(first.message.topic == "a")
            // Asked again, the message in flight goes again before the one waiting.
            first.completion(SendAgain())
            let again = try #require(await calls.next())
            #expect(again.message.topic == "a")
            #expect(delivered.withLock { $0 }.isEmpty)
            again.completion(nil)
            let second = try #require(await calls.next())
            #expect(second.message.topic == "b")
            #expect(delivered.withLock { $0 } == ["a"])
            #expect(!publisher.isEmpty)
            second.completion(Refused())
            #expect(await publisher.waitUntilEmpty(within: .seconds(10)))
            #expect(publisher.failedCount == 1)
            #expect(delivered.withLock { $0 } == ["a"])
            group.cancelAll()
        }
    }
}
