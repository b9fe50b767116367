import Logging
import ServiceLifecycle
import Testing

@testable import MyelineAgentKit

/// `ServiceGroup` fails a group whose service returns during the group's graceful shutdown before
/// its turn (`serviceFinishedUnexpectedly`), whatever its `successTerminationBehavior`; a service
/// in ``UntilShutdown`` waits for its turn. The agent's services that may end on their own (the
/// source's feeder at a replay's end, the start-up trim, the integrations) are wrapped in it.
@Suite(.timeLimit(.minutes(1))) struct UntilShutdownTests {
    /// A one-shot signal between services.
    final class Signal: Sendable {
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() {
            (stream, continuation) = AsyncStream<Void>.makeStream()
        }

        func fire() { continuation.finish() }

        func wait() async { for await _ in stream {} }
    }

    /// Ends on its own once `released` fires, as the feeder at a replay's end; says so in `ended`.
    struct EndsOnItsOwn: Service, CustomStringConvertible {
        var description: String { "EndsOnItsOwn" }
        let released: Signal
        let ended: Signal

        func run() async {
            await released.wait()
            ended.fire()
        }
    }

    /// The control loop: done at once, it stops the group.
    struct Loop: Service {
        func run() async {}
    }

    /// Stopped before the others (it comes last), it lets the other service end while it is
    /// being stopped, as the integrations' farewell can take a moment; then it returns
    /// (`returns`), or waits until the group cancels it.
    struct SlowToStop: Service {
        let release: Signal
        let otherEnded: Signal
        let returns: Bool

        func run() async {
            try? await gracefulShutdown()
            release.fire()
            await otherEnded.wait()
            if !returns { try? await Task.sleep(for: .seconds(3600)) }
        }
    }

    static func run(wrapped: Bool) async throws {
        let (released, ended) = (Signal(), Signal())
        let early = EndsOnItsOwn(released: released, ended: ended)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    wrapped
                        ? .init(service: UntilShutdown(service: early), successTerminationBehavior: .ignore)
                        : .init(service: early, successTerminationBehavior: .ignore),
                    .init(service: Loop(), successTerminationBehavior: .gracefullyShutdownGroup),
                    // Unwrapped, the group fails as the other service ends, and cancels this one.
                    .init(service: SlowToStop(release: released, otherEnded: ended, returns: wrapped)),
                ],
                logger: Logger(label: "test")))
        try await group.run()
    }

    @Test func aServiceThatEndsDuringTheShutdownFailsTheGroupUnlessItWaitsForItsTurn() async throws {
        await #expect(throws: ServiceGroupError.self) { try await Self.run(wrapped: false) }
        try await Self.run(wrapped: true)
    }
}
