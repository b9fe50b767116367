import Logging
import Testing

@testable import MQTT

/// The bookkeeping that pairs libmosquitto's acknowledgement callbacks with waiting publishers,
/// in whichever order the two arrive.
struct AcknowledgementTests {
    static func makeContext() -> ClientContext {
        ClientContext(
            configuration: MQTTConfiguration(broker: BrokerAddress(.unix(path: "/nonexistent")), clientID: "test"),
            logger: Logger(label: "test"))
    }

    @Test func anAcknowledgementThatArrivesFirstIsKeptForItsWaiter() async throws {
        let context = Self.makeContext()
        context.didAcknowledge(7, .published(reasonCode: 0))
        guard case .published(let reason) = try await context.acknowledgement(of: 7) else {
            Issue.record("expected a publish acknowledgement")
            return
        }
        #expect(reason == 0)
    }

    @Test func aWaiterIsResumedByALaterAcknowledgement() async throws {
        let context = Self.makeContext()
        async let acknowledgement = context.acknowledgement(of: 9)
        // The waiter may or may not be registered yet; either order must work.
        context.didAcknowledge(9, .subscribed(grantedQoS: [1, 0x80]))
        guard case .subscribed(let granted) = try await acknowledgement else {
            Issue.record("expected a subscribe acknowledgement")
            return
        }
        #expect(granted == [1, 0x80])
    }

    @Test func anIgnoredPacketLeavesNothingBehind() async throws {
        let context = Self.makeContext()
        context.ignoreAcknowledgement(of: 3)
        context.didAcknowledge(3, .published(reasonCode: 0))
        // Packet id 3 is reused later: the old acknowledgement must not satisfy the new waiter.
        async let next = context.acknowledgement(of: 3)
        context.didAcknowledge(3, .published(reasonCode: 0x87))
        guard case .published(let reason) = try await next else {
            Issue.record("expected a publish acknowledgement")
            return
        }
        #expect(reason == 0x87)
    }

    @Test func shutDownFailsEveryWaiterAndEveryLaterCall() async throws {
        let context = Self.makeContext()
        let waiter = Task { try await context.acknowledgement(of: 1) }
        let events = context.makeEventStream()
        context.shutDown()
        await #expect(throws: MQTTError.self) { try await waiter.value }
        await #expect(throws: MQTTError.self) { try await context.acknowledgement(of: 2) }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func cancellingAWaiterThrowsCancellationError() async throws {
        let context = Self.makeContext()
        let waiter = Task { try await context.acknowledgement(of: 5) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // A late acknowledgement of the cancelled packet is dropped, not kept for a stranger.
        context.didAcknowledge(5, .published(reasonCode: 0))
        async let reused = context.acknowledgement(of: 5)
        context.didAcknowledge(5, .published(reasonCode: 0x10))
        guard case .published(let reason) = try await reused else {
            Issue.record("expected a publish acknowledgement")
            return
        }
        #expect(reason == 0x10)
    }
}
