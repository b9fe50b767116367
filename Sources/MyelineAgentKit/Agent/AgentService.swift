import AgentStore
import Foundation
import LiveActivity
import Location
import Locking
import Logging
import MQTT
import ServiceLifecycle
import Tracking

/// The agent: presence on the status topic, the intents on the command topic, and the device's
/// location activities (``AgentController``) fed by the location source, with their track points
/// through the durable outbox.
///
/// One control loop takes every input (location updates, deadlines, commands, retained activity
/// messages) from an ``InputQueue``. ``run()`` returns when a finite file replay ends or on
/// graceful shutdown (SIGTERM, SIGINT), after ending the activities (with
/// `activity.end-on-exit`) or saving them for the next start, draining the outbox as far as the
/// broker allows within ``drainTimeout``, and publishing `offline`.
struct AgentService: Service, CustomStringConvertible {
    /// Every payload is JSON.
    static let json = MQTTPublishProperties(contentType: "application/json")
    /// How long the broker keeps the agent's session (its subscriptions and QoS 2 exchanges in
    /// flight) after a disconnection: a day.
    static let sessionExpiry: Duration = .seconds(86_400)
    /// How long after the start the agent hands its start-up pages back (``StartupPages``).
    static let startupDuration: Duration = .seconds(10)
    /// How long a shutdown waits for the outbox to drain and for the last envelopes and `offline`.
    static let drainTimeout: Duration = .seconds(10)

    let configuration: AgentConfiguration
    /// The broker password, already read; never logged.
    let password: String?
    let logger: Logger
    let clock: any WallClock

    init(configuration: AgentConfiguration, password: String?, logger: Logger, clock: any WallClock = SystemWallClock())
    {
        self.configuration = configuration
        self.password = password
        self.logger = logger
        self.clock = clock
    }

    /// What service-lifecycle logs for this service: the device, never the configuration (it holds the password).
    var description: String { "AgentService(device: \(configuration.device.id))" }

    func run() async throws {
        let device = configuration.device.id
        let topics = TopicTree(prefix: configuration.topicPrefix)
        let statusTopic = topics.status(device: device)
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        // A session the broker keeps across connection losses: a QoS 2 track point in flight when
        // the link or the broker goes down is completed, not delivered twice, after the reconnection.
        mqtt.cleanSession = false
        mqtt.sessionExpiry = Self.sessionExpiry
        // A random id of this process, in every status it publishes: a status of another instance
        // on this device's topic reveals a second agent with the same device id.
        let instance = String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased())
        mqtt.will = MQTTWill(
            topic: statusTopic,
            payload: Array(try WireCodec.encode(StatusMessage.will(device: device, instance: instance))),
            qos: .atLeastOnce, retain: true, properties: Self.json)
        let source = try configuration.source.address.makeSource(file: configuration.fileOptions, logger: logger)

        let blocking = BlockingQueue(label: "myeline.agent.storage")
        let outboxDirectory = URL(fileURLWithPath: configuration.stateDirectory).appendingPathComponent("outbox").path
        let outboxConfiguration = OutboxConfiguration(capacity: configuration.outbox.capacity)
        let logger = logger
        let outbox = try await blocking.run {
            try Outbox(directory: outboxDirectory, configuration: outboxConfiguration, logger: logger)
        }
        logger.info(
            "Agent starting",
            metadata: [
                "myeline.device": "\(device)", "mqtt.broker": "\(configuration.mqtt.broker)",
                "myeline.source": "\(configuration.source.address)",
            ])

        try await MQTTClient.withClient(configuration: mqtt, logger: logger) { client in
            let drainer = OutboxDrainer(outbox: outbox, blocking: blocking, client: client, logger: logger)
            let health = AgentHealth()
            let presence = Presence(
                client: client, topic: statusTopic, device: device, instance: instance, outbox: outbox,
                blocking: blocking, health: health, clock: clock, logger: logger)
            let conflict = DeviceConflict(
                device: device, instance: instance, startedAt: clock.now, clientID: mqtt.clientID, logger: logger
            ) { client.reconnectSlowly(true) }
            let connectionEvents = client.connectionEvents
            let presenceTask = Task {
                for await event in connectionEvents {
                    conflict.observe(event)
                    guard case .connected = event else { continue }
                    logger.info("Connected to the broker", metadata: ["mqtt.topic": "\(statusTopic)"])
                    drainer.notify()
                    await presence.publishOnline()
                }
            }
            let center = ActivityCenter(clock: clock, maximumActivities: configuration.activity.maximumActivities)
            let centerTask = Task { try await center.run() }
            defer {
                presenceTask.cancel()
                centerTask.cancel()
            }
            let inputs = InputQueue()
            let listeners = try await listen(client: client, topics: topics, inputs: inputs, conflict: conflict)
            let integrations = IntegrationLink.make(
                configuration: configuration, password: password, logger: logger, clock: clock)
            let integrationsTask = integrations.map { link in Task { await link.runLogged() } }
            var controller = AgentController(
                configuration: configuration, topics: topics, client: client, outbox: outbox, blocking: blocking,
                drainer: drainer, center: center, inputs: inputs, health: health, clock: clock, logger: logger,
                reportPresence: { await presence.publishOnline() })
            // Before the drainer starts: the resume reads the seqs of the points still in the outbox.
            await controller.resumeSaved()
            let drainTask = Task { await drainer.run() }
            defer {
                for task in listeners { task.cancel() }
                drainTask.cancel()
            }
            if configuration.activity.autostart {
                await controller.startIfIdle()
            } else {
                logger.info("Autostart is off: waiting for a start command")
            }
            // Start-up is over once the first fixes have gone through the loop.
            let trim = Task {
                try? await Task.sleep(for: Self.startupDuration)
                if !Task.isCancelled { StartupPages.release(logger: logger) }
            }
            defer { trim.cancel() }
            let deadline = Deadline(controller.nextDeadline)
            let feeders = [
                feed(source, into: inputs, integrations: integrations), tick(inputs, deadline: deadline),
                Task {
                    try? await gracefulShutdown()
                    inputs.finish()
                },
            ]
            while let batch = await inputs.next() {
                guard await controller.handle(batch) else { break }
                deadline.set(controller.nextDeadline)
            }
            inputs.finish()
            for task in feeders { task.cancel() }
            await controller.shutDown(timeout: Self.drainTimeout)

            drainer.finish()
            integrations?.finish()
            if await !withTimeout(Self.drainTimeout, { await drainTask.value }) {
                let pending = await drainer.pendingCount()
                logger.warning("Shutting down with undelivered track points", metadata: ["outbox.count": "\(pending)"])
            }
            presenceTask.cancel()
            // Offline, a QoS 1 publish would wait for a reconnection: the will tells the story instead.
            let offline =
                client.isConnected ? await withTimeout(Self.drainTimeout) { await presence.publishOffline() } : false
            if !offline {
                logger.warning("Shutting down without publishing offline: the broker is unreachable")
            }
            // It was told to finish with the drainer: by now it has had the drain's time.
            if let integrationsTask, await !withTimeout(.seconds(2), { await integrationsTask.value }) {
                integrationsTask.cancel()
            }
        }
        try? await blocking.run { outbox.close() }
        logger.info("Agent stopped", metadata: ["myeline.device": "\(device)"])
    }

    /// Subscribes to the device's command topic and its own activity topics; their messages become inputs.
    private func listen(
        client: MQTTClient, topics: TopicTree, inputs: InputQueue, conflict: DeviceConflict
    ) async throws -> [Task<Void, Never>] {
        let device = configuration.device.id
        let commands = try await client.subscribe(to: [topics.command(device: device)])
        let activities = try await client.subscribe(to: [topics.activities(device: device)])
        let statuses = try await client.subscribe(to: [topics.status(device: device)])
        let logger = logger
        return [
            Task {
                for await message in statuses {
                    // A cleared or foreign payload says nothing about another agent.
                    guard let status = try? WireCodec.decode(StatusMessage.self, from: Data(message.payload)) else {
                        continue
                    }
                    conflict.observe(status, retained: message.retain)
                }
            },
            Task {
                for await message in commands {
                    let payload = Data(message.payload)
                    do throws(ActivityError) {
                        inputs.post(.command(try WireCodec.decode(Command.self, from: payload)))
                    } catch {
                        inputs.post(.malformedCommand(id: Command.requestID(in: payload), reason: error.message))
                    }
                }
            },
            Task {
                // Only retained messages, which the broker sends after each (re)subscription: the
                // device's activities as the broker knows them.
                for await message in activities where message.retain {
                    // With a second agent on this device id, an unknown activity is most likely its
                    // own: ending it would make the two undo each other's activities.
                    if conflict.isDetected { continue }
                    guard case .activity(device, let activityID) = topics.route(message.topic) else {
                        logger.debug(
                            "Ignoring a message on an unexpected topic", metadata: ["mqtt.topic": "\(message.topic)"])
                        continue
                    }
                    inputs.post(.retained(activityID: activityID, payload: message.payload))
                }
            },
        ]
    }

    /// Sends the source's updates as inputs (and to the integrations), then ``AgentInput/sourceEnded``.
    private func feed(_ source: any LocationSource, into inputs: InputQueue, integrations: IntegrationLink?)
        -> Task<Void, Never>
    {
        let logger = logger
        return Task {
            do {
                for try await update in source.updates {
                    integrations?.send(update)
                    await inputs.send(.location(update))
                }
                logger.info("The location source ended")
            } catch is CancellationError {
                return
            } catch {
                logger.error("The location source failed", metadata: ["error": "\(error)"])
            }
            inputs.post(.sourceEnded)
        }
    }

    /// Posts a ``AgentInput/tick`` when `deadline` passes: it sleeps on the wall clock until the
    /// deadline, re-reading it at least every second (a new input may move it earlier).
    private func tick(_ inputs: InputQueue, deadline: Deadline) -> Task<Void, Never> {
        let clock = clock
        return Task {
            while !Task.isCancelled {
                let target = deadline.value
                let wake = min(target ?? .distantFuture, clock.now.addingTimeInterval(1))
                do { try await clock.sleep(until: wake) } catch { return }
                if let target, clock.now >= target, deadline.take(target) { inputs.post(.tick) }
            }
        }
    }
}

/// The control loop's next deadline, shared with the ticker.
final class Deadline: Sendable {
    private let date: Locked<Date?>

    init(_ date: Date?) {
        self.date = Locked(date)
    }

    var value: Date? { date.withLock { $0 } }

    func set(_ newValue: Date?) { date.withLock { $0 = newValue } }

    /// Clears the deadline if it is still `target`: one tick per deadline.
    func take(_ target: Date) -> Bool {
        date.withLock { date in
            guard date == target else { return false }
            date = nil
            return true
        }
    }
}

/// The device's retained status: `online` (with the outbox's dropped count, the storage error if
/// saving fails, and the clock's offset if it disagrees with the receiver) after each connection,
/// on the `report` intent and when either of the last two changes; `offline` at a clean shutdown.
struct Presence: Sendable {
    let client: MQTTClient
    let topic: String
    let device: DeviceID
    /// This process's random id, in every status (``DeviceConflict``).
    let instance: String
    let outbox: Outbox
    let blocking: BlockingQueue
    let health: AgentHealth
    let clock: any WallClock
    let logger: Logger

    func publishOnline() async {
        let outbox = outbox
        let dropped = try? await blocking.run { outbox.droppedCount }
        if let dropped, dropped > 0 {
            logger.warning(
                "Track points were dropped while the broker was unreachable: the outbox was full",
                metadata: ["outbox.dropped": "\(dropped)"])
        }
        let report = health.current
        await publish(
            .online(
                device: device, since: clock.now, dropped: dropped, instance: instance,
                storageError: report.storageError, clockOffset: report.clockOffset))
    }

    func publishOffline() async {
        await publish(.offline(device: device, since: clock.now, instance: instance))
    }

    private func publish(_ status: StatusMessage) async {
        do {
            try await client.publish(
                topic, payload: Array(try WireCodec.encode(status)), qos: .atLeastOnce, retain: true,
                properties: AgentService.json)
        } catch {
            logger.warning(
                "Cannot publish the status", metadata: ["error": "\(error)", "myeline.state": "\(status.state)"])
        }
    }
}
