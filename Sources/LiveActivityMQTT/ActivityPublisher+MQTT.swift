import FoundationEssentials
import LiveActivity
import MyelineWire
import Logging
import MQTT

extension ActivityPublisher {
    /// How long the end of ``withPublisher(configuration:device:topics:center:clock:logger:isolation:_:)``
    /// waits for the last envelopes and `offline` to reach the broker: 10 s.
    public static let farewellTimeout: Duration = .seconds(10)

    /// Runs `body` with a publisher of `device`'s activities on a new MQTT client, as the agent
    /// publishes: the client registers the device's `offline` will (`connection-lost`), the
    /// publisher publishes `online` at each connection and follows `center` if given (before
    /// `body` can request anything, so that no event is missed), and once `body` returns it
    /// publishes what is queued and a clean `offline` (within ``farewellTimeout``, while
    /// connected; also when `body` throws) and disconnects.
    ///
    /// Ends carry a message expiry at their dismissal date when `configuration` speaks MQTT 5.
    ///
    /// - Parameters:
    ///   - configuration: the client's configuration; its `will` is replaced.
    ///   - clock: dates the statuses' `since`; `center`'s clock when there is a center.
    /// - Throws: `MQTTError` `.invalidConfiguration` for an invalid configuration, or what `body` throws.
    public static func withPublisher<Result: Sendable>(
        configuration: MQTTConfiguration, device: DeviceID, topics: TopicTree = TopicTree(),
        center: ActivityCenter? = nil, clock: (any WallClock)? = nil, logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ActivityPublisher) async throws -> Result
    ) async throws -> Result {
        let wire = ActivityWire(device: device, topics: topics, messageExpiry: configuration.protocolVersion == .v5)
        let clock = clock ?? center?.clock ?? SystemWallClock()
        // A random id of this process in its statuses, as the agent's: two programs publishing
        // for one device show as two instances.
        let instance = String(UUID().uuidString.filter { $0 != "-" }.prefix(12).lowercased())
        var configuration = configuration
        configuration.will = MQTTMessage(will: wire.will(instance: instance))
        return try await MQTTClient.withClient(configuration: configuration, logger: logger) { client in
            let publisher = ActivityPublisher(wire: wire, sink: client, logger: logger)
            if let center { publisher.follow(center) }
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await publisher.run() }
                group.addTask {
                    for await event in client.connectionEvents {
                        guard case .connected = event else { continue }
                        publisher.enqueue(
                            try wire.message(for: .online(device: device, since: clock.now, instance: instance)))
                    }
                }
                // A body that throws says offline too: the client's clean disconnect discards the
                // will, so the retained status would otherwise stay online.
                let outcome: Swift.Result<Result, any Error>
                do {
                    outcome = .success(try await body(publisher))
                } catch {
                    outcome = .failure(error)
                }
                if client.isConnected, !Task.isCancelled {
                    publisher.enqueue(
                        try wire.message(for: .offline(device: device, since: clock.now, instance: instance)))
                    if await !publisher.waitUntilEmpty(within: farewellTimeout) {
                        logger.info(
                            "Disconnecting before the last messages were published",
                            metadata: ["event": "publisher.farewell.unfinished"])
                    }
                }
                group.cancelAll()
                return try outcome.get()
            }
        }
    }
}
