import AgentCore
import AsyncSupport
import Foundation
import LiveActivity
import Locking
import Logging
import MQTT
import ServiceLifecycle

/// Publishes the core's messages (envelopes, clears, the status, command results) in order, one at
/// a time at QoS 1, through a ``PublishQueue`` that keeps only the newest of the replaceable ones
/// waiting; tells the inbox when an activity's clear reached the broker.
///
/// Offline, the message in flight waits for the reconnection (the client's persistent session
/// completes a QoS 1 exchange cut by a loss) and the rest wait behind it.
///
/// Graceful shutdown: returns at once, cancelling a publish that waits for the broker; the control
/// loop, which shuts down first, has already waited (``waitUntilEmpty(within:)``) for what it
/// wanted published.
final class MessageSender: Service, CustomStringConvertible, Sendable {
    /// What service-lifecycle logs for this service.
    var description: String { "MessageSender" }

    private let client: MQTTClient
    private let topics: TopicTree
    private let device: DeviceID
    private let inbox: AgentInbox
    private let logger: Logger
    private let state = Locked(State())
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    private struct State {
        var queue = PublishQueue()
        /// Waiters for an empty queue.
        var emptied: [CheckedContinuation<Void, Never>] = []
    }

    init(client: MQTTClient, topics: TopicTree, device: DeviceID, inbox: AgentInbox, logger: Logger) {
        self.client = client
        self.topics = topics
        self.device = device
        self.inbox = inbox
        self.logger = logger
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a message.
    func enqueue(_ message: AgentCore.Outgoing) {
        let connected = client.isConnected
        state.withLock { _ = $0.queue.enqueue(message, connected: connected) }
        signal.yield()
    }

    /// Whether nothing waits and nothing is in flight.
    var isEmpty: Bool { state.withLock { $0.queue.isEmpty } }

    /// Waits, for at most `timeout`, until everything queued is published; returns whether it was.
    func waitUntilEmpty(within timeout: Duration) async -> Bool {
        await withTimeout(timeout) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let empty = self.state.withLock { state -> Bool in
                        guard !state.queue.isEmpty, !Task.isCancelled else { return true }
                        state.emptied.append(continuation)
                        return false
                    }
                    if empty { continuation.resume() }
                }
            } onCancel: {
                self.resumeWaiters { _ in true }
            }
            return self.isEmpty
        } ?? false
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in self.signals {
                while let message = self.state.withLock({ $0.queue.next() }) {
                    guard await self.publish(message) else { return }
                    self.state.withLock { $0.queue.done() }
                    self.resumeWaiters { $0.queue.isEmpty }
                }
            }
        }
        resumeWaiters { _ in true }
    }

    private func resumeWaiters(when condition: (State) -> Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard condition(state) else { return [] }
            defer { state.emptied = [] }
            return state.emptied
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Publishes one message; returns false when cancelled (the sender stops).
    private func publish(_ message: AgentCore.Outgoing) async -> Bool {
        let topic: String
        let payload: [UInt8]
        var retain = true
        var properties = MQTTPublishProperties.json
        do {
            switch message {
            case .envelope(let envelope, let expiry):
                topic = topics.activity(device: device, activityID: envelope.header.activity)
                payload = Array(try WireCodec.encode(envelope))
                properties.messageExpiry = expiry
            case .clear(let activityID):
                topic = topics.activity(device: device, activityID: activityID)
                payload = []
                properties = MQTTPublishProperties()
            case .status(let status):
                topic = topics.status(device: device)
                payload = Array(try WireCodec.encode(status))
            case .reply(let result):
                topic = topics.commandResult(device: device)
                payload = Array(try WireCodec.encode(result))
                retain = false
            }
        } catch {
            logger.error("Cannot encode a message", metadata: ["error": "\(error)"])
            return true
        }
        while true {
            do {
                try await client.publish(
                    topic, payload: payload, qos: .atLeastOnce, retain: retain, properties: properties)
                logger.debug("Published", metadata: ["mqtt.topic": "\(topic)"])
                if case .clear(let activityID) = message { inbox.post(.cleared(activityID: activityID)) }
            } catch is CancellationError {
                return false
            } catch let error as MQTTError where error.code == .sessionLost {
                // A broker that forgot the session may never have had it: again, on the new one.
                continue
            } catch {
                logger.warning("Cannot publish", metadata: ["mqtt.topic": "\(topic)", "error": "\(error)"])
            }
            return true
        }
    }
}
