import Foundation
import Interop
import LiveActivity
import Location
import Locking
import Logging
import MQTT
import ServiceLifecycle

/// The agent's connection for other tools (docs/integrations.md): OwnTracks locations on
/// `owntracks/USER/DEVICE`, answers to OwnTracks `reportLocation` commands, and Home Assistant's
/// MQTT discovery.
///
/// A connection of its own (client id `CLIENT-ID-integrations`), because MQTT gives a connection
/// one will and the agent's is its Myeline status: this one's will is the OwnTracks `lwt`. The
/// `lwt` is not retained: retained, it would replace the retained last location that OwnTracks
/// Recorder, Home Assistant and the apps show. OwnTracks locations go out at most once per second of
/// `tst`, the newest fix of each second (``OwnTracksPacing``). They are latest-wins: while the broker
/// is unreachable only the newest location waits (a track is the Myeline track topic's job).
///
/// Feed it with ``send(_:)``. Graceful shutdown: while connected, publishes the locations still
/// queued or held, then the OwnTracks `lwt` (a clean stop sends no will), and returns.
final class IntegrationLink: Service, Sendable, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "IntegrationLink" }

    let configuration: AgentConfiguration
    let password: String?
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

    init(configuration: AgentConfiguration, password: String?, logger: Logger, clock: any WallClock) {
        self.configuration = configuration
        self.password = password
        self.logger = logger
        self.clock = clock
        (fixes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (locations, locationsContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (flushes, flushesContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The link of `configuration`, or nil when it has nothing to do: both options off and no
    /// discovery config of an earlier run to remove.
    static func make(configuration: AgentConfiguration, password: String?, logger: Logger, clock: any WallClock)
        -> IntegrationLink?
    {
        let published = DiscoveryRecord(stateDirectory: configuration.stateDirectory).topics(logger: logger)
        guard configuration.ownTracks.enabled || configuration.homeAssistant.enabled || !published.isEmpty else {
            return nil
        }
        return IntegrationLink(configuration: configuration, password: password, logger: logger, clock: clock)
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

    /// Runs one step of the pacing and queues what it releases for ``publishLocations(_:)``, under
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

    /// Connects, removes stale discovery configs, publishes the current ones after every
    /// connection, and publishes each fix, until graceful shutdown or cancellation; a failure (an
    /// invalid client configuration) is logged, and the agent goes on without its integrations.
    func run() async {
        do {
            try await connectAndPublish()
        } catch is CancellationError {
            return
        } catch {
            // An invalid client configuration: the agent goes on without its integrations.
            logger.error("The integrations connection failed", metadata: ["error": "\(error)"])
        }
    }

    private func connectAndPublish() async throws {
        let ownTracks = configuration.ownTracks
        let homeAssistant = configuration.homeAssistant.enabled
        let startedAt = Int(clock.now.timeIntervalSince1970)
        var mqtt = clientConfiguration
        if ownTracks.enabled {
            mqtt.will = MQTTWill(
                topic: ownTracks.topic.location, payload: OwnTracksCodec.encode(.lastWill(timestamp: startedAt)),
                qos: .atLeastOnce, retain: false, properties: .json)
        }
        let discovery = discovery
        try await MQTTClient.withClient(configuration: mqtt, logger: logger) { client in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.announce(client, discovery: homeAssistant ? discovery : nil) }
                await removeStaleDiscovery(client, current: homeAssistant ? discovery.retainedTopics : [])
                if ownTracks.enabled {
                    let commands = try await client.subscribe(to: [ownTracks.topic.command])
                    group.addTask { await self.answer(commands, client: client) }
                    group.addTask { await self.flushHeldLocations() }
                }
                async let locationsPublished: Void = ownTracks.enabled ? publishLocations(client) : ()
                for await fix in fixes.cancelOnGracefulShutdown() {
                    await publish(
                        client, discovery.attributesTopic, HomeAssistantDiscovery.attributes(fix), retain: true)
                }
                if ownTracks.enabled, client.isConnected {
                    // The held location goes out too, and the lwt after every location: the last
                    // location consumers keep is the last fix. Offline, both would wait for a
                    // connection that may never come: they are left (the broker published the
                    // will when the connection was lost).
                    pace { OwnTracksPacing.Step(publish: $0.finish()) }
                    locationsContinuation.finish()
                    await locationsPublished
                    await publish(
                        client, ownTracks.topic.location, OwnTracksCodec.encode(.lastWill(timestamp: startedAt)),
                        retain: false)
                }
                group.cancelAll()
            }
        }
    }

    /// The link's connection: the agent's, with its own client id.
    private var clientConfiguration: MQTTConfiguration {
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        mqtt.clientID += "-integrations"
        return mqtt
    }

    /// What `myeline-agent remove-integrations` clears (empty retained): the discovery topics
    /// recorded or configured, and the retained OwnTracks location when `owntracks.enabled`.
    var retainedTopics: [String] {
        var topics = DiscoveryRecord(stateDirectory: configuration.stateDirectory).topics(logger: logger)
        if configuration.homeAssistant.enabled {
            topics += discovery.retainedTopics.filter { !topics.contains($0) }
        }
        if configuration.ownTracks.enabled { topics.append(configuration.ownTracks.topic.location) }
        return topics
    }

    /// Clears ``retainedTopics`` and forgets the discovery record, for an uninstall.
    /// - Returns: the topics cleared.
    /// - Throws: `MQTTError` when the broker refuses a clear or cannot be reached (the caller bounds the wait).
    func removeRetained() async throws -> [String] {
        let topics = retainedTopics
        try await MQTTClient.withClient(configuration: clientConfiguration, logger: logger) { client in
            for topic in topics { try await client.publish(topic, payload: [], qos: .atLeastOnce, retain: true) }
        }
        try DiscoveryRecord(stateDirectory: configuration.stateDirectory).save([])
        return topics
    }

    /// Publishes the discovery configs after each connection (Home Assistant may have restarted
    /// and a broker without persistence lost them), and logs the link's connections.
    private func announce(_ client: MQTTClient, discovery: HomeAssistantDiscovery?) async {
        for await event in client.connectionEvents {
            guard case .connected = event else { continue }
            logger.info("Connected to the broker for the integrations")
            guard let discovery else { continue }
            for config in discovery.configs { await publish(client, config.topic, config.payload, retain: true) }
        }
    }

    /// Clears (empty retained) the discovery topics published by an earlier run that this run does
    /// not publish (the option is off, or the prefix changed), then records the current ones and
    /// those it could not clear.
    private func removeStaleDiscovery(_ client: MQTTClient, current: [String]) async {
        let record = DiscoveryRecord(stateDirectory: configuration.stateDirectory)
        var left: [String] = []
        for topic in record.topics(logger: logger) where !current.contains(topic) {
            if await !publish(client, topic, [], retain: true) { left.append(topic) }
        }
        do {
            try record.save(current + left)
        } catch {
            logger.warning(
                "Cannot record the Home Assistant discovery topics; turning the option off will not remove them",
                metadata: ["error": "\(error)", "state.directory": "\(configuration.stateDirectory)"])
        }
    }

    /// Answers `reportLocation` commands on `owntracks/USER/DEVICE/cmd` with the latest fix.
    private func answer(_ commands: MQTTSubscription<MQTTMessage>, client: MQTTClient) async {
        let topic = configuration.ownTracks.topic.command
        for await message in commands {
            let action: String
            do throws(OwnTracksCodec.DecodingError) {
                guard case .command(let name) = try OwnTracksCodec.decode(message.payload).message else {
                    logger.warning(
                        "Ignoring an OwnTracks message that is not a cmd", metadata: ["mqtt.topic": "\(topic)"])
                    continue
                }
                action = name
            } catch {
                logger.warning(
                    "Ignoring a malformed OwnTracks command",
                    metadata: ["mqtt.topic": "\(topic)", "myeline.reason": "\(error.reason)"])
                continue
            }
            guard action == OwnTracksMessage.reportLocationAction else {
                logger.info(
                    "Ignoring an OwnTracks command the agent does not support",
                    metadata: ["owntracks.action": "\(action)"])
                continue
            }
            guard var location = pacing.withLock({ $0.report() }) else {
                logger.info("Cannot answer reportLocation: no fix yet")
                continue
            }
            logger.info("Answering an OwnTracks reportLocation command")
            location.trigger = OwnTracksLocation.Trigger.reportLocation
            await publishLocation(client, location)
        }
    }

    /// Publishes the locations ``OwnTracksPacing`` releases, one at a time, in order, until the
    /// queue is finished (at graceful shutdown, after the last) or the task is cancelled.
    private func publishLocations(_ client: MQTTClient) async {
        for await location in locations { await publishLocation(client, location) }
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

    private func publishLocation(_ client: MQTTClient, _ location: OwnTracksLocation) async {
        // Retained, as the apps publish by default: a map opened later shows the last position.
        await publish(
            client, configuration.ownTracks.topic.location, OwnTracksCodec.encode(.location(location)), retain: true)
    }

    /// Publishes at QoS 1 and logs a failure. - Returns: whether the broker took the message.
    @discardableResult
    private func publish(_ client: MQTTClient, _ topic: String, _ payload: [UInt8], retain: Bool) async -> Bool {
        do {
            try await client.publish(topic, payload: payload, qos: .atLeastOnce, retain: retain, properties: .json)
            return true
        } catch is CancellationError {
            return false
        } catch {
            logger.warning(
                "Cannot publish to an integration topic", metadata: ["mqtt.topic": "\(topic)", "error": "\(error)"])
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
