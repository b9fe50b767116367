import Logging
import TestSupport
import Testing

@testable import MQTT

/// The order of the client's shut-down without a broker: the handle's gate, and subscriptions
/// whose consumers are cancelled while the client shuts down (scripts/sanitize runs these under
/// ThreadSanitizer and AddressSanitizer; `MQTTClientIntegrationTests` does the same connected).
@Suite struct ShutDownTests {
    /// A broker address where nothing listens: the client's attempts fail at once.
    static let nowhere = BrokerAddress(.unix(path: "/nonexistent/myeline-test.sock"))
    /// Quiet: every attempt fails, and says so at info level.
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func theGateLetsCallsThroughOnlyWhileOpenAndNeverAfterTheDestruction() throws {
        let context = ClientContext(
            configuration: MQTTConfiguration(broker: Self.nowhere, clientID: "gate"), logger: Self.logger)
        let handle = try MosquittoHandle(configuration: context.configuration, context: context)
        #expect(handle.whileOpen { _ in true } == nil)
        #expect(handle.withGate { $0 == nil })
        var opened = false
        handle.open { _ in opened = true }
        #expect(opened && handle.isOpen)
        #expect(handle.whileOpen { _ in true } == true)
        handle.close()
        #expect(!handle.isOpen && handle.whileOpen { _ in true } == nil)
        handle.open { _ in }
        handle.destroy()
        #expect(!handle.isOpen)
        #expect(handle.whileOpen { _ in true } == nil)
        #expect(handle.withGate { $0 == nil })
        // Nothing opens a destroyed handle again, and a second destruction does nothing.
        handle.open { _ in Issue.record("opened after the destruction") }
        handle.destroy()
        #expect(!handle.isOpen)
    }

    /// Consumers of many subscriptions cancelled, and not awaited, as the client shuts down: their
    /// streams' ends race the shut-down and the handle's destruction. Many times over.
    @Test func subscriptionsCancelledDuringTheShutDownEndCleanly() async throws {
        for round in 0..<25 {
            let configuration = MQTTConfiguration(broker: Self.nowhere, clientID: "shut-down-\(round)")
            let consumers = try await MQTTClient.withClient(configuration: configuration, logger: Self.logger) {
                client in
                try await CancelledConsumers.make(client, count: 40) { ["fleet/\($0)/#", "fleet/shared/#"] }
            }
            // Every stream ended, by its consumer's cancellation or by the shut-down; none delivered.
            for consumer in consumers { #expect(await consumer.value == 0) }
        }
    }
}

/// How long the network thread's loop may wait for traffic: long enough that a tracker with
/// nothing to send sleeps, short enough that a keep-alive ping is never later than a third of
/// the keep-alive (the broker waits 1.5 keep-alives). A stop or a publish wakes the loop at once
/// whatever the bound: `MQTTClientIntegrationTests` and the agent's shutdown tests cover that.
@Suite struct NetworkLoopBoundTests {
    @Test(arguments: [
        (Duration.seconds(30), Int32(10_000)), (.seconds(15), 5_000), (.seconds(5), 1_667), (.seconds(2), 1_000),
        (.seconds(65_535), 10_000),
    ])
    func isAThirdOfTheKeepAliveWithinOneToTenSeconds(keepAlive: Duration, milliseconds: Int32) {
        #expect(NetworkLoop.loopTimeoutMilliseconds(keepAlive: keepAlive) == milliseconds)
    }
}
