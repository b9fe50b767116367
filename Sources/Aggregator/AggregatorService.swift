import Board
import Foundation
import Interop
import LiveActivity
import MyelineWire
import Logging
import MQTT
import ServiceLifecycle

/// The aggregator: subscribes to the fleet, keeps the board's state, and presents it until the
/// presentation ends (`q`, `--once` printed) or a graceful shutdown (SIGTERM, SIGINT) cancels it.
struct AggregatorService: Service {
    /// How long without a retained message ends the bootstrap when the sentinel does not come.
    static let quietPeriod: TimeInterval = 1
    /// The longest a bootstrap may take, even while retained messages still trickle in.
    static let bootstrapLimit: TimeInterval = 30
    /// How many messages one round of ``BoardSession/drain()`` must apply to count as a flood's.
    static let floodRound = 32
    /// How long the board waits after a flood's round before the next, so that the messages arriving
    /// meanwhile are applied together rather than each waking the board (a thread switch apiece, which
    /// cost more than applying the message); the display is at most this much later.
    static let floodPause = Duration.milliseconds(2)

    /// How long the check message after the bootstrap may take to come back, seconds.
    static let checkLimit: TimeInterval = 5

    let configuration: AggregatorConfiguration
    let password: String?
    let presentation: Presentation
    let display: Display
    let session: BoardSession
    let logger: Logger
    let clock: any WallClock

    func run() async throws {
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        // The bootstrap of a large fleet arrives at once; keep all of it rather than drop the oldest.
        mqtt.subscriptionBufferSize = 1 << 20
        do {
            try await serve(mqtt: mqtt)
        } catch is CancellationError {
            // SIGTERM or SIGINT while a presenter waits or writes: a clean stop, not an error.
            logger.debug("Stopped by a graceful shutdown", metadata: ["event": "board.stopped"])
        }
    }

    /// Connects, subscribes and presents until the presentation ends or a graceful shutdown cancels it.
    private func serve(mqtt clientConfiguration: MQTTConfiguration) async throws {
        let topics = TopicTree(prefix: configuration.topicPrefix)
        try await cancelWhenGracefulShutdown {
            try await MQTTClient.withClient(configuration: clientConfiguration, logger: logger) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await watchConnection(client) }
                    group.addTask { try await subscribe(client, topics: topics) }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: .seconds(1))
                            session.removeDismissed()
                            session.noteLosses(dropped: client.droppedMessageCount)
                        }
                    }
                    group.addTask { try await present() }
                    // The presentation ends the service; the other tasks run until then.
                    defer { group.cancelAll() }
                    while let _ = try await group.next() {
                        return
                    }
                }
            }
        }
    }

    private func present() async throws {
        switch presentation {
        case .board:
            try await session.runBoard(display)
        case .followJSON:
            try await session.follow(display, format: .json)
        case .followPlain:
            try await session.follow(display, format: .plain)
        case .mapOnly:
            // The map is a service of its own; this one only keeps the board's model, until cancelled.
            while true { try await Task.sleep(for: .seconds(3600)) }
        case .once, .onceJSON:
            let outcome = try await session.waitForOnce(connectTimeout: configuration.onceTimeout)
            await session.printOnce(display, json: presentation == .onceJSON, outcome: outcome)
        }
    }

    private func watchConnection(_ client: MQTTClient) async throws {
        for await event in client.connectionEvents {
            session.noteConnection(event)
            switch event {
            case .connected:
                session.setConnection(nil)
            case .connectionFailed(let error):
                session.setConnection("cannot connect to \(configuration.mqtt.broker): \(error.message); retrying")
                logger.warning(
                    "Cannot connect to the broker",
                    metadata: ["event": "board.connect.failed", "error": "\(error.message)"])
            case .disconnected(let error):
                session.setConnection("disconnected: \(error?.message ?? "closed"); reconnecting")
            }
        }
    }

    /// Places the sentinel, subscribes to the fleet and the sentinel in one packet (``Bootstrap``), and
    /// applies what arrives until cancelled; once no retained message came for the quiet period,
    /// checks for the sentinel, gives the verdict and clears the sentinel.
    private func subscribe(_ client: MQTTClient, topics: TopicTree) async throws {
        let sentinel = session.sentinelTopic
        do {
            try await client.publish(
                sentinel, payload: Array(BoardSession.sentinelPayload.utf8), qos: .atLeastOnce, retain: true)
            session.noteSentinel(placed: true)
        } catch let error as MQTTError {
            session.noteSentinel(placed: false)
            logger.notice(
                "Cannot place the bootstrap's sentinel: whether the broker cuts the retained bootstrap will be unknown",
                metadata: ["event": "board.sentinel.failed", "mqtt.topic": "\(sentinel)", "error": "\(error.message)"])
        }
        let subscribedAt = clock.now
        let ownTracks = configuration.ownTracks ? [OwnTracksTopic.allDevices] : []
        // The sentinel last, in the same packet: its retained copy is queued behind the fleet's, or
        // dropped with them.
        let messages = try await client.subscribeInOnePacket(
            to: [topics.allStatus, topics.allActivities] + ownTracks + [sentinel], transform: session.receive)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // One element per message; each round applies everything that came meanwhile. After a
                // round that found a flood's worth, the next waits a moment for more.
                for await _ in messages {
                    if session.drain() >= Self.floodRound { try await Task.sleep(for: Self.floodPause) }
                }
            }
            group.addTask {
                while !session.isQuiet(subscribedAt: subscribedAt, quiet: Self.quietPeriod, limit: Self.bootstrapLimit)
                {
                    try await Task.sleep(for: .milliseconds(100))
                }
                // A live message after it: the sentinel, if queued, comes before it (mosquitto may hold
                // a queued message until the next one for the client).
                let checkedAt = clock.now
                do {
                    guard session.isSentinelPlaced else { throw CancellationError() }
                    try await client.publish(
                        sentinel, payload: Array(BoardSession.checkPayload.utf8), qos: .atLeastOnce)
                } catch {
                    session.noteSentinel(placed: false)
                }
                while !session.isBootstrapComplete {
                    session.completeIfCheckIsLate(sentAt: checkedAt, limit: Self.checkLimit)
                    try await Task.sleep(for: .milliseconds(20))
                }
                // The sentinel has served; a board killed before this leaves it on the broker (its topic is its own).
                try? await client.publish(sentinel, payload: [], qos: .atLeastOnce, retain: true)
            }
            try await group.waitForAll()
        }
    }
}
