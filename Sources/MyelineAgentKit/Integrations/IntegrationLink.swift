import AsyncSupport
import FoundationEssentials
import Interop
import LiveActivity
import MyelineWire
import Location
import Locking
import Logging
import MQTT
import ServiceLifecycle

/// The agent's messages for other tools (docs/integrations.md): OwnTracks locations on
/// `owntracks/USER/DEVICE`, answers to OwnTracks `reportLocation` commands, and Home Assistant's
/// MQTT discovery, on the agent's own connection.
///
/// The agent's connection, not one of its own: a broker that binds client ids to usernames
/// (deploy/mosquitto/production.conf) lets an account have one connection, and a second one with
/// the device's account would take the agent's over, again and again. That connection's will is
/// the Myeline `offline` status, so the OwnTracks `lwt` is no will: the link publishes it at a
/// clean stop, and after a crash consumers read the Myeline status (Home Assistant's availability
/// does). The `lwt` is not retained: retained, it would replace the retained last location that
/// OwnTracks Recorder, Home Assistant and the apps show. OwnTracks locations go out at most once
/// per second of `tst`, the newest fix of each second (``OwnTracksPacing``). They are latest-wins:
/// while the broker is unreachable only the newest location waits (a track is the Myeline track
/// topic's job).
///
/// Nothing here ends or holds up the agent's connection on purpose: a failure is logged and the
/// link goes on without what failed. An integration whose message the broker refuses (its ACL) is
/// given up at that first refusal, logged once, until the agent restarts: mosquitto 2.0.11 under
/// production.conf's `max_queued_messages 0` closes the connection of a client whose publish it
/// denies, here the agent's, and a refusal a second would keep the agent offline. Its messages
/// (QoS 1, small) share the connection with the Myeline messages, at most one of each kind in
/// flight (a location, an attributes message, a discovery config, an answer); each task waits
/// for its own acknowledgements only.
///
/// Feed it with ``send(_:)``. Graceful shutdown: stops waiting for the broker at once; while
/// connected, publishes the location held and those still queued, then the OwnTracks `lwt`
/// (within ``farewellTimeout``), and returns. ``AgentService`` shuts it down before the
/// ``ControlLoop``'s wind-down, and the client closes after both.
final class IntegrationLink: Service, Sendable, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "IntegrationLink" }

    /// How long a graceful shutdown waits for the last OwnTracks location and the `lwt` to be
    /// acknowledged: two small messages, milliseconds on a working connection; the Myeline
    /// wind-down comes after it (10 s), within systemd's 20 s stop timeout.
    static let farewellTimeout: Duration = .seconds(3)

    let configuration: AgentConfiguration
    /// The agent's client, connected or not; its will is the agent's.
    let client: MQTTClient
    let logger: Logger
    let clock: any WallClock
    /// The fixes for Home Assistant, newest only.
    private let fixes: AsyncStream<LocationFix>
    private let continuation: AsyncStream<LocationFix>.Continuation
    private let pacing = Locked(OwnTracksPacing())
    /// The OwnTracks locations due, newest only, for the one task that publishes them.
    private let locations: AsyncStream<OwnTracksLocation>
    private let locationsContinuation: AsyncStream<OwnTracksLocation>.Continuation
    /// When the held location is due (``OwnTracksPacing/Step/flushAt``), newest only.
    private let flushes: AsyncStream<ContinuousClock.Instant>
    private let flushesContinuation: AsyncStream<ContinuousClock.Instant>.Continuation
    /// The integrations given up, each at the broker's first refusal of one of its messages.
    private let refused = Locked<Set<Integration>>([])
    /// The executor of the state directory's files (the agent's journal's), for the discovery record.
    private let stateFiles: BlockingExecutor

    /// The record of the discovery topics published.
    private var record: DiscoveryRecord {
        DiscoveryRecord(stateDirectory: configuration.stateDirectory, files: stateFiles)
    }

    /// What a message belongs to, for giving it up at a refusal.
    private enum Integration: String {
        case ownTracks = "owntracks"
        /// Its discovery configs, attributes, and the removal of an earlier run's configs.
        case homeAssistant = "homeassistant"
    }

    init(
        configuration: AgentConfiguration, client: MQTTClient, logger: Logger, clock: any WallClock,
        stateFiles: BlockingExecutor
    ) {
        self.configuration = configuration
        self.stateFiles = stateFiles
        self.client = client
        self.logger = logger
        self.clock = clock
        (fixes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (locations, locationsContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (flushes, flushesContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The link of `configuration` on `client`, or nil when it has nothing to do: both options off
    /// and no discovery config of an earlier run to remove.
    static func make(
        configuration: AgentConfiguration, client: MQTTClient, logger: Logger, clock: any WallClock,
        stateFiles: BlockingExecutor
    ) async -> IntegrationLink? {
        let published = await DiscoveryRecord(stateDirectory: configuration.stateDirectory, files: stateFiles)
            .topics(logger: logger)
        guard configuration.ownTracks.enabled || configuration.homeAssistant.enabled || !published.isEmpty else {
            return nil
        }
        return IntegrationLink(
            configuration: configuration, client: client, logger: logger, clock: clock, stateFiles: stateFiles)
    }

    /// Takes a fix to publish. Its OwnTracks location is paced here, in the order the fixes come,
    /// so that none is lost before ``OwnTracksPacing`` sees it; for Home Assistant, the newest fix
    /// waiting replaces an older one.
    func send(_ fix: LocationFix) {
        if configuration.ownTracks.enabled {
            let location = location(fix, trigger: OwnTracksLocation.Trigger.timer)
            pace { $0.receive(location, now: .now) }
        }
        if configuration.homeAssistant.enabled { continuation.yield(fix) }
    }

    /// Runs one step of the pacing and queues what it releases for ``publishLocations()``, under
    /// the pacing's lock, so that the queue's order is the order of release.
    private func pace(_ step: (inout OwnTracksPacing) -> OwnTracksPacing.Step) {
        pacing.withLock { pacing in
            let step = step(&pacing)
            if let location = step.publish { locationsContinuation.yield(location) }
            if let due = step.flushAt { flushesContinuation.yield(due) }
        }
    }

    private var discovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            prefix: configuration.homeAssistant.prefix, deviceID: configuration.device.id.rawValue,
            name: configuration.device.name,
            statusTopic: TopicTree(prefix: configuration.topicPrefix).status(device: configuration.device.id),
            softwareVersion: Myeline.version)
    }

    /// Removes stale discovery configs, publishes the current ones after every connection, answers
    /// OwnTracks commands and publishes each fix, until graceful shutdown or cancellation; then the
    /// farewell. Never throws: the agent goes on without what fails here.
    func run() async {
        let ownTracks = configuration.ownTracks
        let lastWill = OwnTracksCodec.encode(.lastWill(timestamp: Int(clock.now.timeIntervalSince1970)))
        await withTaskGroup(of: Farewell.self) { group in
            if ownTracks.enabled {
                group.addTask {
                    await self.publishLocations()
                    // The queue ended for the farewell, not by cancellation: the lwt after every
                    // location, so that the last location consumers keep is the last fix.
                    guard !Task.isCancelled else { return .cancelled }
                    await self.publish(ownTracks.topic.location, lastWill, retain: false, for: .ownTracks)
                    return .said
                }
            }
            await cancelWhenGracefulShutdown { await self.publishUntilShutdown() }
            // Offline, the held location and the lwt would wait for a connection that may never
            // come: they are left, and consumers read the Myeline status (the will says offline).
            if ownTracks.enabled, client.isConnected, !Task.isCancelled {
                pace { OwnTracksPacing.Step(publish: $0.finish()) }
                locationsContinuation.finish()
                group.addTask {
                    try? await Task.sleep(for: Self.farewellTimeout)
                    return .timedOut
                }
                if await group.next() == .timedOut {
                    logger.warning(
                        "Stopping before the broker acknowledged the last OwnTracks location and lwt",
                        metadata: [
                            "event": "owntracks.farewell.unfinished", "mqtt.topic": "\(ownTracks.topic.location)",
                        ])
                }
            }
            group.cancelAll()
        }
    }

    /// How the farewell's wait ended.
    private enum Farewell {
        case said, cancelled, timedOut
    }

    /// Everything but the farewell; returns when cancelled (at graceful shutdown: a publish waiting
    /// for the broker must not hold up the agent's stop).
    private func publishUntilShutdown() async {
        let homeAssistant = configuration.homeAssistant.enabled
        let discovery = discovery
        await withDiscardingTaskGroup { group in
            if homeAssistant { group.addTask { await self.announce(discovery) } }
            if configuration.ownTracks.enabled {
                group.addTask { await self.answerCommands() }
                group.addTask { await self.flushHeldLocations() }
            }
            await removeStaleDiscovery(current: homeAssistant ? discovery.retainedTopics : [])
            for await fix in fixes {
                await publish(
                    discovery.attributesTopic, HomeAssistantDiscovery.attributes(fix), retain: true, for: .homeAssistant
                )
            }
            group.cancelAll()
        }
    }

    /// What `myeline-agent remove-integrations` clears (empty retained): the discovery topics
    /// recorded or configured, and the retained OwnTracks location when `owntracks.enabled`.
    func retainedTopics() async -> [String] {
        var topics = await record.topics(logger: logger)
        if configuration.homeAssistant.enabled {
            topics += discovery.retainedTopics.filter { !topics.contains($0) }
        }
        if configuration.ownTracks.enabled { topics.append(configuration.ownTracks.topic.location) }
        return topics
    }

    /// Clears ``retainedTopics()`` and forgets the discovery record, for an uninstall (the link is
    /// not run then: its client is the command's own).
    /// - Returns: the topics cleared.
    /// - Throws: `MQTTError` when the broker refuses a clear or cannot be reached (the caller bounds the wait).
    func removeRetained() async throws -> [String] {
        let topics = await retainedTopics()
        for topic in topics { try await client.publish(topic, payload: [], qos: .atLeastOnce, retain: true) }
        try await record.save([])
        return topics
    }

    /// Publishes the discovery configs after each connection (Home Assistant may have restarted
    /// and a broker without persistence lost them), and logs when the broker took them all.
    private func announce(_ discovery: HomeAssistantDiscovery) async {
        for await event in client.connectionEvents {
            guard case .connected = event else { continue }
            var published = 0
            for config in discovery.configs
            where await publish(config.topic, config.payload, retain: true, for: .homeAssistant) {
                published += 1
            }
            if published == discovery.configs.count {
                logger.info(
                    "Published the Home Assistant discovery",
                    metadata: ["event": "homeassistant.discovery.published", "homeassistant.configs": "\(published)"])
            }
        }
    }

    /// Clears (empty retained) the discovery topics published by an earlier run that this run does
    /// not publish (the option is off, or the prefix changed), then records the current ones and
    /// those it could not clear.
    private func removeStaleDiscovery(current: [String]) async {
        var left: [String] = []
        for topic in await record.topics(logger: logger) where !current.contains(topic) {
            if await !publish(topic, [], retain: true, for: .homeAssistant) { left.append(topic) }
        }
        do {
            try await record.save(current + left)
        } catch {
            logger.warning(
                "Cannot record the Home Assistant discovery topics; turning the option off will not remove them",
                metadata: [
                    "event": "homeassistant.record.failed", "error": "\(error)",
                    "state.directory": "\(configuration.stateDirectory)",
                ])
        }
    }

    /// Subscribes to `owntracks/USER/DEVICE/cmd` and answers `reportLocation` commands with the
    /// latest fix. A subscription the broker refuses is logged, and the rest goes on.
    private func answerCommands() async {
        let topic = configuration.ownTracks.topic.command
        // Once connected, so that a refusal is seen: a filter the client sends with the connection
        // itself has its acknowledgement ignored.
        for await event in client.connectionEvents {
            if case .connected = event { break }
        }
        let commands: MQTTSubscription<MQTTMessage>
        do {
            try Task.checkCancellation()
            commands = try await client.subscribe(to: [topic])
        } catch is CancellationError {
            return
        } catch let error as MQTTError where error.code == .subscriptionRefused {
            logger.warning(
                "The broker refused the OwnTracks command topic: reportLocation goes unanswered, the rest goes on; give the device's account read access to it in the broker's ACL (docs/integrations.md)",
                metadata: ["event": "owntracks.subscribe.refused", "mqtt.topic": "\(topic)", "error": "\(error)"])
            return
        } catch {
            logger.warning(
                "Cannot subscribe to the OwnTracks command topic: reportLocation goes unanswered, the rest goes on",
                metadata: ["event": "owntracks.subscribe.failed", "mqtt.topic": "\(topic)", "error": "\(error)"])
            return
        }
        for await message in commands { await answer(message) }
    }

    /// Answers one message on the OwnTracks command topic.
    private func answer(_ message: MQTTMessage) async {
        let action: String
        do throws(OwnTracksCodec.DecodingError) {
            guard case .command(let name) = try OwnTracksCodec.decode(message.payload).message else {
                logger.warning(
                    "Ignoring an OwnTracks message that is not a cmd",
                    metadata: ["event": "owntracks.command.ignored", "mqtt.topic": "\(message.topic)"])
                return
            }
            action = name
        } catch {
            logger.warning(
                "Ignoring a malformed OwnTracks command",
                metadata: [
                    "event": "owntracks.command.malformed", "mqtt.topic": "\(message.topic)",
                    "myeline.reason": "\(error.reason)",
                ])
            return
        }
        guard action == OwnTracksMessage.reportLocationAction else {
            logger.info(
                "Ignoring an OwnTracks command the agent does not support",
                metadata: ["event": "owntracks.command.unsupported", "owntracks.action": "\(action)"])
            return
        }
        guard var location = pacing.withLock({ $0.report() }) else {
            logger.info(
                "Cannot answer reportLocation: no fix yet", metadata: ["event": "owntracks.report-location.unanswered"])
            return
        }
        logger.info(
            "Answering an OwnTracks reportLocation command", metadata: ["event": "owntracks.report-location.answered"])
        location.trigger = OwnTracksLocation.Trigger.reportLocation
        await publishLocation(location)
    }

    /// Publishes the locations ``OwnTracksPacing`` releases, one at a time, in order, until the
    /// queue is finished (at graceful shutdown, after the last) or the task is cancelled.
    private func publishLocations() async {
        for await location in locations { await publishLocation(location) }
    }

    /// Releases the held location when it is due, if no fix of a later second released it before.
    private func flushHeldLocations() async {
        for await due in flushes {
            do {
                try await Task.sleep(until: due, clock: .continuous)
            } catch {
                return
            }
            pace { OwnTracksPacing.Step(publish: $0.flush(now: .now)) }
        }
    }

    /// The OwnTracks location of a fix, with an accuracy always (``HorizontalAccuracy``).
    private func location(_ fix: LocationFix, trigger: String) -> OwnTracksLocation {
        OwnTracksLocation(
            time: fix.time, latitude: fix.latitude, longitude: fix.longitude, altitude: fix.altitude, speed: fix.speed,
            course: fix.course, horizontalAccuracy: HorizontalAccuracy(fix).metres,
            trackerID: configuration.ownTracks.trackerID, trigger: trigger)
    }

    private func publishLocation(_ location: OwnTracksLocation) async {
        // Retained, as the apps publish by default: a map opened later shows the last position.
        await publish(
            configuration.ownTracks.topic.location, OwnTracksCodec.encode(.location(location)), retain: true,
            for: .ownTracks)
    }

    /// Publishes at QoS 1 unless `integration` was given up, and logs a failure; a refusal by the
    /// broker gives `integration` up.
    /// - Returns: whether the broker took the message.
    @discardableResult
    private func publish(_ topic: String, _ payload: [UInt8], retain: Bool, for integration: Integration) async
        -> Bool
    {
        guard !refused.withLock({ $0.contains(integration) }) else { return false }
        do {
            try await client.publish(topic, payload: payload, qos: .atLeastOnce, retain: retain, properties: .json)
            return true
        } catch is CancellationError {
            return false
        } catch let error as MQTTError where error.code == .publishRefused {
            if refused.withLock({ $0.insert(integration).inserted }) {
                logger.warning(
                    "The broker refused an integration's message: the agent goes on without that integration until it restarts; give the device's account write access to the topic in the broker's ACL (docs/integrations.md)",
                    metadata: [
                        "event": "integration.publish.refused",
                        "myeline.integration": "\(integration.rawValue)", "mqtt.topic": "\(topic)", "error": "\(error)",
                    ])
            }
            return false
        } catch {
            logger.warning(
                "Cannot publish to an integration topic",
                metadata: ["event": "integration.publish.failed", "mqtt.topic": "\(topic)", "error": "\(error)"])
            return false
        }
    }
}

extension HorizontalAccuracy {
    /// The accuracy of a fix: the receiver's, or else from its HDOP, or else assumed.
    init(_ fix: LocationFix) {
        self.init(receiver: fix.horizontalAccuracy, hdop: fix.quality.hdop)
    }
}

extension HomeAssistantDiscovery {
    /// The attributes of a fix; values out of their ranges (a negative speed) are unknown.
    static func attributes(_ fix: LocationFix) -> [UInt8] {
        attributes(
            latitude: fix.latitude, longitude: fix.longitude, accuracy: HorizontalAccuracy(fix), altitude: fix.altitude,
            speed: fix.speed.flatMap { $0 >= 0 ? $0 : nil },
            course: fix.course.flatMap { (0...360).contains($0) ? $0 : nil },
            satellites: fix.satellitesUsed.flatMap { $0 >= 0 ? $0 : nil })
    }
}
