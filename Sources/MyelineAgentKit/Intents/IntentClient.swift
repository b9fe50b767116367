import FoundationEssentials
import LiveActivity
import MyelineWire
import Logging
import MQTT

/// The I/O shell of an ``IntentExchange``: a short-lived MQTT client that sends one command and
/// waits for its answer.
enum IntentClient {

    /// Sends `command` to `device`'s agent and waits at most `timeout` for its result.
    ///
    /// - Parameters:
    ///   - mqtt: the client configuration; its client id must differ from the running agent's.
    ///   - topics: the topic tree of the device's prefix.
    /// - Returns: how the exchange ended; a broker that cannot be reached is an outcome, not an error.
    /// - Throws: `MQTTError` `.invalidConfiguration` when `mqtt` is invalid, or `CancellationError`.
    static func send(
        _ command: Command, to device: DeviceID, topics: TopicTree, mqtt: MQTTConfiguration, timeout: Duration,
        logger: Logger
    ) async throws -> IntentOutcome {
        var exchange = IntentExchange(command: command, device: device, topics: topics)
        let (commandTopic, filters) = (exchange.commandTopic, exchange.filters)
        let payload = Array(try WireCodec.encode(command))
        // The command expires with the wait: an agent that reconnects later (its broker session
        // keeps what arrived while it was away) does not carry out a command nobody waits for.
        let properties = MQTTPublishProperties(
            contentType: MQTTPublishProperties.json.contentType,
            messageExpiry: UInt32(clamping: max(1, timeout.components.seconds)))
        let (events, continuation) = AsyncStream.makeStream(of: IntentExchange.Event.self)
        return try await MQTTClient.withClient(configuration: mqtt, logger: logger) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                defer { group.cancelAll() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    continuation.yield(.timedOut)
                }
                group.addTask {
                    for await event in client.connectionEvents {
                        switch event {
                        case .connected: continuation.yield(.connected)
                        case .connectionFailed(let error): continuation.yield(.connectionFailed(error))
                        case .disconnected: continue
                        }
                    }
                }
                for await event in events {
                    switch exchange.receive(event) {
                    case .wait:
                        continue
                    case .send:
                        logger.debug(
                            "Sending the command", metadata: ["event": "intent.sent", "mqtt.topic": "\(commandTopic)"])
                        group.addTask {
                            do {
                                let subscription = try await client.subscribe(to: filters)
                                try await client.publish(
                                    commandTopic, payload: payload, qos: .atLeastOnce, properties: properties)
                                continuation.yield(.sent)
                                for await message in subscription { continuation.yield(.message(message)) }
                            } catch let error as MQTTError {
                                continuation.yield(.sendFailed(error))
                            }
                        }
                    case .ignore(.otherCommand(let id)):
                        logger.debug(
                            "Ignored the result of another command",
                            metadata: ["event": "intent.result.ignored", "myeline.command": "\(id)"])
                    case .ignore(.invalid(let topic, let problem)):
                        logger.warning(
                            "Ignored an invalid payload",
                            metadata: [
                                "event": "intent.payload.invalid", "mqtt.topic": "\(topic)", "error": "\(problem)",
                            ])
                    case .finish(let outcome):
                        return outcome
                    }
                }
                // The stream only ends when this task is cancelled.
                throw CancellationError()
            }
        }
    }
}
