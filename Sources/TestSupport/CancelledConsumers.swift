import MQTT

/// Subscriptions whose consumers are cancelled at once and not awaited, as a service's listeners
/// are when it stops: for tests of what a client does with subscriptions ending while it shuts down.
public enum CancelledConsumers {
    /// Subscribes `count` times through `client`, to the filters `filters` gives for each index,
    /// starts a task consuming each subscription (counting its messages), cancels them all, and
    /// returns them, still running, for the caller to await once the client has shut down.
    public static func make(
        _ client: MQTTClient, count: Int, filters: (Int) -> [String]
    ) async throws -> [Task<Int, Never>] {
        var consumers: [Task<Int, Never>] = []
        for index in 0..<count {
            let subscription = try await client.subscribe(to: filters(index))
            consumers.append(
                Task {
                    var received = 0
                    for await _ in subscription { received += 1 }
                    return received
                })
        }
        for consumer in consumers { consumer.cancel() }
        return consumers
    }
}
