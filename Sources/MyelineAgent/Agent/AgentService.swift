import AgentStore
import Foundation
import LiveActivity
import Location
import Logging
import MQTT
import ServiceLifecycle
import Synchronization
import Tracking

/// The agent: presence on the status topic, one location activity fed by the location source
/// through a ``Tracker``, and its track points through the durable outbox.
///
/// ``run()`` returns when a finite file replay ends or on graceful shutdown (SIGTERM, SIGINT),
/// after ending the activity (with `activity.end-on-exit`), draining the outbox as far as the
/// broker allows within ``drainTimeout``, and publishing `offline`.
struct AgentService: Service, CustomStringConvertible {
    /// Every payload is JSON.
    static let json = MQTTPublishProperties(contentType: "application/json")
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
        mqtt.will = MQTTWill(
            topic: statusTopic, payload: Array(try WireCodec.encode(StatusMessage.will(device: device))),
            qos: .atLeastOnce, retain: true, properties: Self.json)
        let source = try configuration.source.address.makeSource(file: configuration.fileOptions, logger: logger)

        let blocking = BlockingQueue(label: "myeline.agent.outbox")
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
            let drainTask = Task { await drainer.run() }
            let connectionEvents = client.connectionEvents
            let presenceTask = Task { [clock] in
                for await event in connectionEvents {
                    guard case .connected = event else { continue }
                    logger.info("Connected to the broker", metadata: ["mqtt.topic": "\(statusTopic)"])
                    drainer.notify()
                    do {
                        let online = try WireCodec.encode(StatusMessage.online(device: device, since: clock.now))
                        try await client.publish(
                            statusTopic, payload: Array(online), qos: .atLeastOnce, retain: true,
                            properties: Self.json)
                    } catch {
                        logger.warning("Cannot publish online", metadata: ["error": "\(error)"])
                    }
                }
            }
            defer {
                presenceTask.cancel()
                drainTask.cancel()
            }

            if configuration.activity.autostart {
                var trip = Trip(
                    configuration: configuration, topics: topics, client: client, outbox: outbox,
                    blocking: blocking, drainer: drainer, clock: clock, logger: logger)
                try await trip.run(source: source)
            } else {
                logger.info("Autostart is off: waiting for shutdown")
                try? await gracefulShutdown()
            }

            drainer.finish()
            if await !withTimeout(Self.drainTimeout, { await drainTask.value }) {
                let pending = await drainer.pendingCount()
                logger.warning("Shutting down with undelivered track points", metadata: ["outbox.count": "\(pending)"])
            }
            presenceTask.cancel()
            // Offline, a QoS 1 publish would wait for a reconnection: the will tells the story instead.
            var published = false
            if client.isConnected {
                published = await withTimeout(Self.drainTimeout) {
                    do {
                        let offline = try WireCodec.encode(StatusMessage.offline(device: device, since: clock.now))
                        try await client.publish(
                            statusTopic, payload: Array(offline), qos: .atLeastOnce, retain: true,
                            properties: Self.json)
                    } catch {
                        logger.warning("Cannot publish offline", metadata: ["error": "\(error)"])
                    }
                }
            }
            if !published { logger.warning("Shutting down without publishing offline: the broker is unreachable") }
        }
        try? await blocking.run { outbox.close() }
        logger.info("Agent stopped", metadata: ["myeline.device": "\(device)"])
    }
}

/// One location activity from its start to the end of the source or the shutdown: the tracker,
/// the activity and the track points. Used from one task only.
struct Trip {
    let configuration: AgentConfiguration
    let topics: TopicTree
    let client: MQTTClient
    let outbox: Outbox
    let blocking: BlockingQueue
    let drainer: OutboxDrainer
    let clock: any WallClock
    let logger: Logger
    let center: ActivityCenter
    /// The current activity on disk, for the resume after a restart (a later slice reads it).
    let store: ActivityStateStore<LocationActivityAttributes>

    private var tracker: Tracker?
    private var activity: Activity<LocationActivityAttributes>?
    private var publisher: EnvelopePublisher?
    private var publisherTask: Task<Void, Never>?
    /// The seq of the activity's latest event.
    private var lastSeq = 0
    /// The seq of the latest track point.
    private var trackSeq = 0

    init(
        configuration: AgentConfiguration, topics: TopicTree, client: MQTTClient, outbox: Outbox,
        blocking: BlockingQueue, drainer: OutboxDrainer, clock: any WallClock, logger: Logger
    ) {
        self.configuration = configuration
        self.topics = topics
        self.client = client
        self.outbox = outbox
        self.blocking = blocking
        self.drainer = drainer
        self.clock = clock
        self.logger = logger
        center = ActivityCenter(clock: clock, maximumActivities: configuration.activity.maximumActivities)
        store = ActivityStateStore(directory: configuration.stateDirectory, logger: logger)
    }

    /// Tracks until the source ends or a graceful shutdown, then ends or keeps the activity.
    mutating func run(source: any LocationSource) async throws {
        if configuration.tracksOnFixTimes {
            try await replay(source)
        } else {
            try await start(now: clock.now)
            try await live(source)
        }
        try await finish()
    }

    /// A file replay: the tracker runs on the fixes' own times, so the budget and heartbeats
    /// follow the recording whatever the replay speed; a deadline passes when a later update comes.
    private mutating func replay(_ source: any LocationSource) async throws {
        for try await update in source.updates.cancelOnGracefulShutdown() {
            let now = update.time ?? tracker.map { $0.lastFixTime ?? $0.startedAt } ?? clock.now
            if tracker == nil { try await start(now: now) }
            var ticks = 0
            while let deadline = tracker?.nextDeadline, deadline <= now, ticks < 1000 {
                ticks += 1
                try await tick(now: deadline)
            }
            try await receive(update, now: now)
        }
        logger.info("The location source ended")
    }

    /// A live source: the tracker runs on the wall clock, and a ticker wakes it at its deadlines.
    private mutating func live(_ source: any LocationSource) async throws {
        enum Input: Sendable {
            case update(LocationUpdate)
            case tick
        }
        let (inputs, input) = AsyncStream<Input>.makeStream()
        let updates = source.updates
        let logger = logger
        let sourceTask = Task {
            do {
                for try await update in updates.cancelOnGracefulShutdown() { input.yield(.update(update)) }
            } catch {
                logger.error("The location source failed", metadata: ["error": "\(error)"])
            }
            input.finish()
        }
        // The ticker sleeps on the wall clock until the tracker's next deadline, re-reading the
        // deadline at least every second (a deadline may move earlier after an update).
        let deadline = Mutex<Date?>(tracker?.nextDeadline)
        let clock = clock
        let tickerTask = Task {
            while !Task.isCancelled {
                let target = deadline.withLock { $0 }
                let wake = min(target ?? .distantFuture, clock.now.addingTimeInterval(1))
                do { try await clock.sleep(until: wake) } catch { return }
                if let target, clock.now >= target { input.yield(.tick) }
            }
        }
        defer {
            sourceTask.cancel()
            tickerTask.cancel()
        }
        for await event in inputs {
            switch event {
            case .update(let update):
                try await receive(update, now: clock.now)
            case .tick:
                let now = clock.now
                if let due = tracker?.nextDeadline, due <= now { try await tick(now: now) }
            }
            let next = tracker?.nextDeadline
            deadline.withLock { $0 = next }
        }
    }

    /// Requests the activity with the tracker's first content (no location) and starts publishing its events.
    private mutating func start(now: Date) async throws {
        var tracker = Tracker(
            attributes: configuration.activityAttributes, policy: configuration.trackingPolicy, now: now)
        let first = tracker.start(now: now)
        let content = first.content ?? tracker.content(now: now)
        let activity = try center.request(attributes: configuration.activityAttributes, content: content)
        // Taken before any change: the stream replays only the latest event to a new consumer.
        let events = activity.events
        let publisher = EnvelopePublisher(
            client: client, device: configuration.device.id,
            topic: topics.activity(device: configuration.device.id, activityID: activity.id), logger: logger)
        publisherTask = Task { await publisher.run(events) }
        self.tracker = tracker
        self.activity = activity
        self.publisher = publisher
        lastSeq = 1
        try await persist(now: now)
        logger.info(
            "Activity started",
            metadata: ["myeline.device": "\(configuration.device.id)", "myeline.activity": "\(activity.id)"])
    }

    private mutating func receive(_ update: LocationUpdate, now: Date) async throws {
        guard var tracker else { return }
        let output = tracker.receive(update, now: now)
        self.tracker = tracker
        try await apply(output, now: now)
    }

    private mutating func tick(now: Date) async throws {
        guard var tracker else { return }
        let output = tracker.tick(now: now)
        self.tracker = tracker
        try await apply(output, now: now)
    }

    /// Sends the track point, then publishes the content when the budget says so, and saves the
    /// activity's sequences and trip totals when either changed.
    private mutating func apply(_ output: Tracker.Output, now: Date) async throws {
        guard let activity else { return }
        if let fix = output.trackFix {
            trackSeq += 1
            let point = TrackPoint(
                device: configuration.device.id, activity: activity.id, seq: trackSeq, time: fix.time,
                latitude: fix.latitude, longitude: fix.longitude, altitude: fix.altitude,
                speed: fix.speed.flatMap { $0 >= 0 ? $0 : nil },
                course: fix.course.flatMap { (0...360).contains($0) ? $0 : nil },
                horizontalAccuracy: fix.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil }, fix: FixMode(fix.mode),
                satellites: fix.satellitesUsed.flatMap { $0 >= 0 ? $0 : nil })
            let payload = Array(try WireCodec.encode(point))
            let topic = topics.track(device: configuration.device.id, activityID: activity.id)
            let outbox = outbox
            try await blocking.run { try outbox.append(topic: topic, payload: payload) }
            drainer.notify()
        }
        logger.trace("Tracker decided", metadata: ["myeline.decision": "\(output.decision)"])
        if let content = output.content {
            try activity.update(content, alertConfiguration: output.alert)
            lastSeq += 1
        }
        if output.trackFix != nil || output.content != nil { try await persist(now: now) }
    }

    /// Saves the activity (id, attributes, last envelope and track seq, trip totals) atomically.
    private func persist(now: Date) async throws {
        guard let tracker, let activity else { return }
        let record = PersistedActivity(
            activityID: activity.id, attributesType: LocationActivityAttributes.typeName, lastSeq: lastSeq,
            trackSeq: trackSeq, attributes: activity.attributes,
            tripTotals: try JSONEncoder().encode(tracker.snapshot(now: now)), startedAt: tracker.startedAt)
        let store = store
        try await blocking.run { try store.save(record) }
    }

    /// Ends the activity (with `activity.end-on-exit`) or keeps it retained, and waits for its last
    /// envelopes to be published, within ``AgentService/drainTimeout``.
    private mutating func finish() async throws {
        guard var tracker, let activity, let publisher, let publisherTask else { return }
        if configuration.activity.endOnExit {
            let now = clock.now
            let final = tracker.stop(now: configuration.tracksOnFixTimes ? (tracker.lastFixTime ?? now) : now)
            self.tracker = tracker
            try activity.end(final, dismissalPolicy: configuration.activity.dismissal.policy(endingAt: now))
            lastSeq += 1
            center.refresh()
            if activity.activityState == .dismissed { lastSeq += 1 }
            // An ended activity is not resumed; clearing a later dismissal after a restart is a later slice.
            let store = store
            try await blocking.run { try store.remove() }
            logger.info("Activity ended", metadata: ["myeline.activity": "\(activity.id)"])
        } else {
            logger.info("Activity kept for the next start", metadata: ["myeline.activity": "\(activity.id)"])
        }
        if activity.activityState != .dismissed, publisher.stop(after: lastSeq) { publisherTask.cancel() }
        guard client.isConnected else {
            publisherTask.cancel()
            logger.warning("Shutting down offline: the activity's last envelopes are not published")
            return
        }
        if await !withTimeout(AgentService.drainTimeout, { await publisherTask.value }) {
            logger.warning("Shutting down before the activity's last envelope was published")
        }
    }
}
