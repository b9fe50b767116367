import AgentCore
import AsyncSupport
import FoundationEssentials
import LiveActivity
import MyelineWire
import LiveActivityMQTT
import Location
import Logging
import MQTT
import MyelineConfiguration
import ServiceLifecycle

/// The agent: presence on the status topic, the intents on the command topic, and the device's
/// location activities fed by the location source, with their track points through the durable
/// outbox. Every decision is ``AgentCore/AgentCore``'s; this service opens the state directory,
/// connects, and runs the services around the core in one `ServiceGroup`:
///
/// | service | does | on graceful shutdown |
/// |---|---|---|
/// | ``ControlLoop`` | feeds the core, performs its actions, owns time | the core's shutdown (end or keep the activities), then the wind-down: last envelopes, outbox, `offline`, within ``drainTimeout`` |
/// | `ActivityPublisher` | publishes envelopes, clears, status, replies in order, on the spool's thread (``PreferringExecutor``) | stops at once (the loop waited for it) |
/// | ``OutboxDrainer`` | delivers the outbox's track points at QoS 2 | stops at once (the loop waited for it) |
/// | ``StorageCommitter`` | the storage's group commit every `storage.sync-interval` | stops at once (the last commit is the storage's close) |
/// | ``BrokerListener`` | connection events, commands, retained activities, statuses | stops at once |
/// | ``SourceFeeder`` | the location source's updates | stops reading at once |
/// | ``IntegrationLink`` | OwnTracks and Home Assistant, on this connection | publishes the last OwnTracks location and `lwt` (within 3 s), then stops |
/// | ``StartupTrim`` | hands the start-up pages back after 10 s | stops at once |
///
/// The group shuts them down in the reverse of that order (the source and the listeners first,
/// the loop, then the sender and the drainer), each after the one before has returned; nothing
/// runs outside it, so when ``run()`` returns every task it started has ended. ``run()`` returns
/// when a replay ends or on graceful shutdown (SIGTERM, SIGINT) of the enclosing group.
public struct AgentService: Service, CustomStringConvertible {
    /// How long the broker keeps the agent's session (its subscriptions and QoS 2 exchanges in
    /// flight) after a disconnection: a day.
    static let sessionExpiry: Duration = .seconds(86_400)
    /// How long a shutdown waits for the last envelopes, the outbox and `offline`, together.
    static let drainTimeout: Duration = .seconds(10)

    let configuration: AgentConfiguration
    /// The broker password, already read; never logged.
    let password: String?
    let logger: Logger
    /// The wall clock; nil for the system's, sleeping on the agent's event loop (``AgentInbox/clock(on:)``).
    let clock: (any WallClock)?

    init(configuration: AgentConfiguration, password: String?, logger: Logger, clock: (any WallClock)? = nil) {
        self.configuration = configuration
        self.password = password
        self.logger = logger
        self.clock = clock
    }

    /// What service-lifecycle logs for this service: the device, never the configuration (it holds the password).
    public var description: String { "AgentService(device: \(configuration.device.id))" }

    public func run() async throws {
        let device = configuration.device.id
        let topics = TopicTree(prefix: configuration.topicPrefix)
        // A random id of this process, in every status it publishes: a status of another instance
        // on this device's topic reveals a second agent with the same device id.
        let instance = String(UUID().uuidString.filter { $0 != "-" }.prefix(12).lowercased())
        let mqtt = try clientConfiguration(topics: topics, instance: instance)
        // The agent's one event loop: the spool, the control loop, the drainer, the publisher and
        // the gpsd link, so that a fix goes from gpsd's socket to the spool without a thread switch.
        let loop = EventLoop(name: "myeline-loop")
        defer { loop.shutdown() }
        let source = try configuration.source.address.makeSource(
            file: configuration.fileOptions, logger: logger, loop: loop)
        let storage = try await AgentStorage.open(
            stateDirectory: configuration.stateDirectory,
            spoolDirectory: configuration.storage.resolvedSpoolDirectory(
                stateDirectory: configuration.stateDirectory, environment: ProcessInfo.processInfo.environment),
            durability: configuration.storage.durability, capacity: configuration.outbox.capacity,
            spoolExecutor: loop, logger: logger)
        logger.info(
            "Agent starting",
            metadata: [
                "event": "agent.starting",
                "myeline.device": "\(device)", "mqtt.broker": "\(configuration.mqtt.broker)",
                "myeline.source": "\(configuration.source.address)",
            ])
        do {
            try await MQTTClient.withClient(configuration: mqtt, logger: logger, eventLoop: loop) { client in
                try await runServices(
                    client: client, storage: storage, source: source, topics: topics, instance: instance,
                    clock: clock ?? AgentInbox.clock(on: loop))
            }
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
        logger.info("Agent stopped", metadata: ["event": "agent.stopped", "myeline.device": "\(device)"])
    }

    /// The agent's connection: a session the broker keeps across connection losses (a QoS 2
    /// track point in flight when the link or the broker goes down is completed, not delivered
    /// twice, after the reconnection), and the `offline` will of this process.
    private func clientConfiguration(topics: TopicTree, instance: String) throws -> MQTTConfiguration {
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        mqtt.cleanSession = false
        mqtt.sessionExpiry = Self.sessionExpiry
        mqtt.will = MQTTMessage(
            will: ActivityWire(device: configuration.device.id, topics: topics).will(instance: instance))
        return mqtt
    }

    private func runServices(
        client: MQTTClient, storage: AgentStorage, source: any LocationSource, topics: TopicTree, instance: String,
        clock: any WallClock
    ) async throws {
        let inbox = AgentInbox()
        // One publishing path with the library's: the core decides what, the publisher sends it
        // in order; a clear that reached the broker ends its activity in the core.
        let publisher = ActivityPublisher(
            wire: ActivityWire(
                device: configuration.device.id, topics: topics,
                messageExpiry: configuration.mqtt.protocolVersion == .v5),
            sink: client, logger: logger
        ) { message in
            if case .clear(let activityID) = message.kind { inbox.post(.cleared(activityID: activityID)) }
        }
        let drainer = OutboxDrainer(storage: storage, client: client, logger: logger)
        let integrations = await IntegrationLink.make(
            configuration: configuration, client: client, logger: logger, clock: clock,
            stateFiles: storage.journalExecutor)
        let loop = ControlLoop(
            settings: configuration.coreSettings(instance: instance), inbox: inbox, storage: storage,
            publisher: publisher,
            drainer: drainer, client: client, integrations: integrations, clock: clock, logger: logger,
            drainTimeout: Self.drainTimeout)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: drainer),
            .init(service: PreferringExecutor(service: publisher, executor: storage.spoolExecutor)),
            .init(service: loop, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: BrokerListener(
                    client: client, topics: topics, device: configuration.device.id, inbox: inbox, logger: logger)),
            .init(
                service: UntilShutdown(
                    service: SourceFeeder(
                        source: source, loops: configuration.source.loops, inbox: inbox,
                        executor: storage.spoolExecutor)),
                successTerminationBehavior: .ignore),
        ]
        if let interval = configuration.storage.durability.syncInterval {
            // On the loop, whose timer wakes it and which runs the commit (its flush on a thread of its own).
            services.append(
                .init(
                    service: PreferringExecutor(
                        service: StorageCommitter(storage: storage, interval: interval, inbox: inbox),
                        executor: storage.spoolExecutor)))
        }
        if let integrations {
            services.append(.init(service: UntilShutdown(service: integrations), successTerminationBehavior: .ignore))
        }
        services.append(
            .init(service: UntilShutdown(service: StartupTrim(logger: logger)), successTerminationBehavior: .ignore))
        var group = ServiceGroupConfiguration(services: services, logger: logger)
        // The services' own messages are the agent's; the group's are for debugging.
        group.logging.keys.serviceKey = "myeline.service"
        try await ServiceGroup(configuration: group).run()
    }
}
