import Board
import Foundation
import Interop
import LiveActivity
import Logging
import MQTT
import ServiceLifecycle

/// The aggregator: subscribes to the fleet, keeps the board's state, and presents it until the
/// presentation ends (`q`, `--once` printed) or a graceful shutdown (SIGTERM, SIGINT) cancels it.
struct AggregatorService: Service {
    /// How long without a retained message ends the bootstrap when the sync message cannot be used.
    static let quietPeriod: TimeInterval = 1
    /// The longest a bootstrap may take, even while retained messages still trickle in.
    static let bootstrapLimit: TimeInterval = 30

    let configuration: AggregatorConfiguration
    let password: String?
    let presentation: Presentation
    let display: Display
    let logger: Logger
    let clock: any WallClock

    func run() async throws {
        let topics = TopicTree(prefix: configuration.topicPrefix)
        let syncTopic = "myeline-aggregator/sync/\(UUID().uuidString.lowercased())"
        let session = BoardSession(
            topics: topics, ownTracks: configuration.ownTracksInput, syncTopic: syncTopic, clock: clock, logger: logger,
            recordsChanges: presentation == .followJSON)
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        // The bootstrap of a large fleet arrives at once; keep all of it rather than drop the oldest.
        mqtt.subscriptionBufferSize = 1 << 20
        do {
            try await serve(session, topics: topics, mqtt: mqtt)
        } catch is CancellationError {
            // SIGTERM or SIGINT while a presenter waits or writes: a clean stop, not an error.
            logger.debug("Stopped by a graceful shutdown")
        }
    }

    /// Connects, subscribes and presents until the presentation ends or a graceful shutdown cancels it.
    private func serve(_ session: BoardSession, topics: TopicTree, mqtt clientConfiguration: MQTTConfiguration)
        async throws
    {
        try await cancelWhenGracefulShutdown {
            try await MQTTClient.withClient(configuration: clientConfiguration, logger: logger) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await watchConnection(client, session: session) }
                    group.addTask { try await subscribe(client, topics: topics, session: session) }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: .seconds(1))
                            session.removeDismissed()
                            session.noteLosses(dropped: client.droppedMessageCount)
                        }
                    }
                    group.addTask { try await present(session) }
                    // The presentation ends the service; the other tasks run until then.
                    defer { group.cancelAll() }
                    while let _ = try await group.next() {
                        return
                    }
                }
            }
        }
    }

    private func present(_ session: BoardSession) async throws {
        switch presentation {
        case .board:
            try await session.runBoard(display)
        case .followJSON:
            try await session.follow()
        case .once, .onceJSON:
            while !session.isBootstrapComplete { try await Task.sleep(for: .milliseconds(20)) }
            if presentation == .once { session.printOnce(display) } else { session.printJSON() }
        }
    }

    private func watchConnection(_ client: MQTTClient, session: BoardSession) async throws {
        for await event in client.connectionEvents {
            switch event {
            case .connected:
                session.setConnection(nil)
            case .connectionFailed(let error):
                session.setConnection("cannot connect to \(configuration.mqtt.broker): \(error.message); retrying")
                logger.warning("Cannot connect to the broker", metadata: ["mqtt.error": "\(error.message)"])
            case .disconnected(let error):
                session.setConnection("disconnected: \(error?.message ?? "closed"); reconnecting")
            }
        }
    }

    private func subscribe(_ client: MQTTClient, topics: TopicTree, session: BoardSession) async throws {
        // The broker's retained count first, for judging the bootstrap; brokers may refuse $SYS.
        let broker = try? await client.subscribe(to: [Bootstrap.brokerRetainedCountTopic], transform: session.receive)
        if let broker {
            // Its retained value arrives right after the subscription, before the fleet's bootstrap.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await received in broker {
                        session.apply(received)
                        return
                    }
                }
                group.addTask { try await Task.sleep(for: .milliseconds(500)) }
                _ = try await group.next()
                group.cancelAll()
            }
        }
        let subscribedAt = clock.now
        // The sync topic first: the filters are acknowledged one after the other, and a SUBACK after
        // the fleet's would wait behind the whole retained bootstrap, or never come when mosquitto
        // drops part of it (issue 2196), which left the quiet-period fallback unreached.
        let ownTracks = configuration.ownTracks ? [OwnTracksTopic.allDevices] : []
        let fleet = try await client.subscribe(
            to: [session.syncTopic, topics.allStatus, topics.allActivities] + ownTracks, transform: session.receive)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await received in fleet { session.apply(received) }
            }
            if let broker {
                group.addTask {
                    for await received in broker { session.apply(received) }
                }
            }
            group.addTask {
                do {
                    try await client.publish(session.syncTopic, payload: Array("sync".utf8), qos: .atLeastOnce)
                } catch {
                    logger.info(
                        "Cannot publish the bootstrap sync message; waiting for retained messages to stop",
                        metadata: ["mqtt.error": "\(error)"])
                }
            }
            group.addTask {
                while !session.isBootstrapComplete {
                    try await Task.sleep(for: .milliseconds(100))
                    session.completeIfQuiet(
                        subscribedAt: subscribedAt, quiet: Self.quietPeriod, limit: Self.bootstrapLimit)
                }
            }
            try await group.waitForAll()
        }
    }
}
