import AgentStore
import Foundation
import LiveActivity
import Location
import Logging
import MQTT
import Tracking

/// The agent's activities and what happens to them: it resumes those saved by an earlier run,
/// feeds every running one the location updates and deadlines, carries out the intents, ends
/// activities it does not know (orphans) and clears ended ones at their dismissal date.
///
/// Inputs come in batches (``handle(_:)``): the batch's track points and changed states are saved
/// with one flush, before anything of it is published, so a seq that reached the broker is on
/// disk and is never reused after a crash. Used from the control loop's task only.
struct AgentController {
    let configuration: AgentConfiguration
    let topics: TopicTree
    let client: MQTTClient
    let outbox: Outbox
    let blocking: BlockingQueue
    let drainer: OutboxDrainer
    let center: ActivityCenter
    let inputs: InputQueue
    /// Where the status learns that saving fails.
    let health: AgentHealth
    let clock: any WallClock
    let logger: Logger
    /// Where each activity's state file is kept: `STATE-DIRECTORY/activities`.
    let activitiesDirectory: String
    /// Publishes the status `online` again (for the `report` intent).
    let reportPresence: @Sendable () async -> Void

    private(set) var trips: [Trip] = []
    /// Activities that ended before a restart, and when their retained envelope is to be cleared.
    private var clears: [String: Date] = [:]
    /// Activities being cleared now, or over: known, so never taken for orphans.
    private var finished: Set<String> = []
    /// Whether saving has failed and been logged, so a full disk is not logged at every fix.
    private var storageFailing = false
    /// The track points of the batches that could not be saved since saving started failing (some
    /// may have reached the outbox before the failure), for the log line when it works again.
    private var unsavedPoints = 0
    /// The wall clock judged against the receiver's fix times; nil for a file replay, whose times
    /// are the clock's own.
    private var clockCheck: ClockCheck?

    init(
        configuration: AgentConfiguration, topics: TopicTree, client: MQTTClient, outbox: Outbox,
        blocking: BlockingQueue, drainer: OutboxDrainer, center: ActivityCenter, inputs: InputQueue,
        health: AgentHealth, clock: any WallClock, logger: Logger, reportPresence: @escaping @Sendable () async -> Void
    ) {
        self.configuration = configuration
        self.topics = topics
        self.client = client
        self.outbox = outbox
        self.blocking = blocking
        self.drainer = drainer
        self.center = center
        self.inputs = inputs
        self.health = health
        self.clock = clock
        self.logger = logger
        self.reportPresence = reportPresence
        activitiesDirectory =
            URL(fileURLWithPath: configuration.stateDirectory).appendingPathComponent("activities")
            .path
        if case .gpsd = configuration.source.address { clockCheck = ClockCheck() }
    }

    private var device: DeviceID { configuration.device.id }

    /// The earliest time a ``AgentInput/tick`` is needed: a tracker's deadline or a dismissal date.
    var nextDeadline: Date? {
        (trips.filter(\.isRunning).compactMap(\.tracker.nextDeadline) + clears.values).min()
    }

    // MARK: - Start

    /// Takes back the activities an earlier run saved: running ones resume with their id, seq and
    /// trip totals (and no location until the next fix); ended ones are cleared at their dismissal date.
    mutating func resumeSaved() async {
        let directory = activitiesDirectory
        let (logger, outbox) = (logger, outbox)
        // The last batch's points may be in the outbox without their trip's state (a crash
        // between the two writes): their seqs count too.
        let lastBatch = InputQueue.defaultCapacity * configuration.activity.maximumActivities
        let saved: [PersistedActivity<LocationActivityAttributes>]
        let newest: [OutboxRecord]
        do {
            (saved, newest) = try await blocking.run {
                (
                    try ActivityStateStore<LocationActivityAttributes>.loadAll(directory: directory, logger: logger),
                    try outbox.newest(max: lastBatch)
                )
            }
        } catch {
            logger.error("Cannot read the saved activities", metadata: ["error": "\(error)"])
            return
        }
        for record in saved {
            guard record.attributesType == LocationActivityAttributes.typeName, record.attributes.deviceID == device
            else {
                logger.warning(
                    "Ignoring a saved activity of another device or type",
                    metadata: ["myeline.activity": "\(record.activityID)", "state.directory": "\(directory)"])
                continue
            }
            if let dismissal = record.dismissalDate {
                clears[record.activityID] = dismissal
                continue
            }
            let trackTopic = topics.track(device: device, activityID: record.activityID)
            let trackSeq = newest.filter { $0.topic == trackTopic }.compactMap {
                try? WireCodec.decode(TrackPoint.self, from: Data($0.payload)).seq
            }.reduce(record.trackSeq, max)
            let now = clock.now
            let snapshot = try? JSONDecoder().decode(TripAccumulator.Snapshot.self, from: record.tripTotals)
            var tracker = Tracker(
                attributes: record.attributes, policy: configuration.trackingPolicy, now: now, resuming: snapshot)
            let content = tracker.start(now: now).content ?? tracker.content(now: now)
            do {
                let activity = try center.resume(
                    attributes: record.attributes, content: content, id: record.activityID, lastSeq: record.lastSeq)
                await launch(activity, tracker: tracker, lastSeq: record.lastSeq + 1, trackSeq: trackSeq)
                logger.info(
                    "Activity resumed",
                    metadata: [
                        "myeline.activity": "\(record.activityID)", "myeline.seq": "\(record.lastSeq + 1)",
                        "myeline.trackSeq": "\(trackSeq)",
                    ])
            } catch {
                logger.error(
                    "Cannot resume a saved activity",
                    metadata: ["myeline.activity": "\(record.activityID)", "error": "\(error)"])
            }
        }
    }

    /// Starts a new activity when none runs (autostart).
    mutating func startIfIdle() async {
        guard !trips.contains(where: \.isRunning) else { return }
        do {
            _ = try await start(id: nil)
        } catch {
            logger.error("Cannot start an activity", metadata: ["error": "\(error)"])
        }
    }

    /// Requests a new activity with the tracker's first content (no location) and starts publishing it.
    private mutating func start(id: String?) async throws(ActivityError) -> String {
        let now = clock.now
        let attributes = configuration.activityAttributes
        var tracker = Tracker(attributes: attributes, policy: configuration.trackingPolicy, now: now)
        let content = tracker.start(now: now).content ?? tracker.content(now: now)
        let activity = try center.request(attributes: attributes, content: content, id: id)
        await launch(activity, tracker: tracker, lastSeq: 1, trackSeq: 0)
        logger.info(
            "Activity started", metadata: ["myeline.device": "\(device)", "myeline.activity": "\(activity.id)"])
        return activity.id
    }

    /// Saves a new or resumed activity, then publishes its events from the first one on.
    private mutating func launch(
        _ activity: Activity<LocationActivityAttributes>, tracker: Tracker, lastSeq: Int, trackSeq: Int
    ) async {
        // Taken before any change: the stream replays only the latest event to a new consumer.
        let events = activity.events
        let publisher = EnvelopePublisher(
            client: client, device: device, topic: topics.activity(device: device, activityID: activity.id),
            logger: logger)
        let inputs = inputs
        let publisherTask = Task {
            let cleared = await publisher.run(events)
            if cleared { inputs.post(.cleared(activityID: activity.id)) }
            return cleared
        }
        var trip = Trip(
            activity: activity, tracker: tracker,
            store: ActivityStateStore(directory: activitiesDirectory, activityID: activity.id, logger: logger),
            publisher: publisher, publisherTask: publisherTask, lastSeq: lastSeq, trackSeq: trackSeq)
        trip.unsaved = true
        trips.append(trip)
        var none: [(topic: String, payload: [UInt8])] = []
        await flush(&none)
    }

    // MARK: - Inputs

    /// Handles a batch of inputs in order, then saves and publishes what they changed.
    ///
    /// - Returns: false when the location source ended: the agent then shuts down.
    mutating func handle(_ batch: [AgentInput]) async -> Bool {
        var points: [(topic: String, payload: [UInt8])] = []
        var sourceRunning = true
        for input in batch {
            let now = clock.now
            switch input {
            case .location(let update):
                if let fix = update.fix { await checkClock(fixTime: fix.time, now: now) }
                for index in trips.indices where trips[index].isRunning {
                    collect(trips[index].tracker.receive(update, now: now), at: index, into: &points)
                }
            case .tick:
                for index in trips.indices where trips[index].isRunning {
                    guard let due = trips[index].tracker.nextDeadline, due <= now else { continue }
                    collect(trips[index].tracker.tick(now: now), at: index, into: &points)
                }
                clearDue(now: now)
            case .command(let command):
                await flush(&points)
                await execute(command)
            case .malformedCommand(let id, let reason):
                logger.warning("Refusing a malformed command", metadata: ["myeline.reason": "\(reason)"])
                if let id { reply(.malformed(id: id, error: reason, timestamp: now)) }
            case .retained(let activityID, let payload):
                reconcile(activityID: activityID, payload: payload)
            case .cleared(let activityID):
                await forget(activityID)
            case .sourceEnded:
                sourceRunning = false
            }
        }
        await flush(&points)
        return sourceRunning
    }

    /// Takes a tracker's output for trip `index`: its track point joins the batch's.
    private mutating func collect(
        _ output: Tracker.Output, at index: Int, into points: inout [(topic: String, payload: [UInt8])]
    ) {
        logger.trace("Tracker decided", metadata: ["myeline.decision": "\(output.decision)"])
        do {
            let topic = topics.track(device: device, activityID: trips[index].id)
            if let point = try trips[index].take(output, topic: topic) { points.append(point) }
        } catch {
            logger.error("Cannot encode a track point", metadata: ["error": "\(error)"])
        }
    }

    /// Appends the batch's track points to the outbox and saves every changed trip (one flush
    /// each), then publishes the pending contents. The drainer reads the outbox on the same
    /// serial queue, so no point of the batch is published before its trip's state is saved.
    private mutating func flush(_ points: inout [(topic: String, payload: [UInt8])]) async {
        let now = clock.now
        var records: [(ActivityStateStore<LocationActivityAttributes>, PersistedActivity<LocationActivityAttributes>)] =
            []
        for index in trips.indices where trips[index].unsaved {
            trips[index].unsaved = false
            do {
                records.append((trips[index].store, try trips[index].record(now: now)))
            } catch {
                logger.error("Cannot encode the trip totals", metadata: ["error": "\(error)"])
            }
        }
        let batch = points
        points = []
        if !records.isEmpty || !batch.isEmpty {
            let (outbox, records) = (outbox, records)
            // Points first: after a crash between the two, a restart finds the points' seqs in the
            // outbox (`resumeSaved`), while a state saved first would have its points lost.
            let failure: String? = await blocking.runCollectingFailure {
                if !batch.isEmpty { try outbox.append(contentsOf: batch) }
                for (store, record) in records { try store.save(record) }
            }
            await reportStorage(failure, points: batch.count)
            if !batch.isEmpty { drainer.notify() }
        }
        for index in trips.indices {
            do {
                try trips[index].publishPending()
            } catch {
                logger.error("Cannot update the activity", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Logs a storage failure once until storage works again, and says so in the status (as
    /// `storage-error`) when saving starts or stops failing. The points of a failed batch are lost;
    /// the activities' envelopes are published all the same.
    private mutating func reportStorage(_ failure: String?, points: Int) async {
        if let failure {
            unsavedPoints += points
            if !storageFailing {
                logger.error(
                    "Cannot save to the state directory; track points are lost until it works again, live updates go on",
                    metadata: [
                        "error": "\(failure)", "state.directory": "\(configuration.stateDirectory)",
                        "outbox.batch": "\(points)",
                    ])
            }
            storageFailing = true
        } else if storageFailing {
            storageFailing = false
            logger.notice(
                "Saving to the state directory works again",
                metadata: [
                    "state.directory": "\(configuration.stateDirectory)", "outbox.unsaved": "\(unsavedPoints)",
                ])
            unsavedPoints = 0
        }
        if health.setStorageError(failure) { await reportPresence() }
    }

    /// Compares the wall clock with a fix's time (a receiver's true UTC); when the clock leaves
    /// or comes back within ``ClockCheck/defaultTolerance``, or moves again, logs it and says so in
    /// the status (`clock-offset`). Stale dates need no correction: they are made from fix times.
    private mutating func checkClock(fixTime: Date, now: Date) async {
        guard clockCheck?.observe(fixTime: fixTime, now: now) == true else { return }
        let offset = clockCheck?.reportedOffset
        if let offset {
            logger.warning(
                "The system clock disagrees with the receiver's GPS time; the agent's own timestamps are off, fix times and stale dates are the receiver's",
                metadata: ["clock.offset_s": "\(offset)", "clock.now": "\(now)", "gps.time": "\(fixTime)"])
        } else {
            logger.notice("The system clock agrees with the receiver's GPS time again")
        }
        health.setClockOffset(offset)
        await reportPresence()
    }

    // MARK: - Intents

    private mutating func execute(_ command: Command) async {
        let plan = IntentPlan(command, running: trips.filter(\.isRunning).map(\.id))
        let result: CommandResult
        switch plan {
        case .start(let id):
            do {
                let started = try await start(id: id)
                result = .success(for: command, activity: started, timestamp: clock.now)
            } catch {
                result = .failure(for: command, error: error.message, timestamp: clock.now)
            }
        case .answer(let activity):
            result = .success(for: command, activity: activity, timestamp: clock.now)
        case .stop(let activity):
            await stop(activity)
            result = .success(for: command, activity: activity, timestamp: clock.now)
        case .pause(let activity), .resume(let activity):
            if let index = trips.firstIndex(where: { $0.id == activity }) {
                let now = clock.now
                let output =
                    plan == .pause(activity)
                    ? trips[index].tracker.pause(now: now) : trips[index].tracker.resume(now: now)
                var points: [(topic: String, payload: [UInt8])] = []
                collect(output, at: index, into: &points)
                await flush(&points)
            }
            result = .success(for: command, activity: activity, timestamp: clock.now)
        case .report(let activity):
            await reportPresence()
            if let activity, let index = trips.firstIndex(where: { $0.id == activity }) {
                trips[index].pending = (trips[index].tracker.content(now: clock.now), nil)
                trips[index].unsaved = true
                var none: [(topic: String, payload: [UInt8])] = []
                await flush(&none)
            }
            result = .success(for: command, activity: activity, timestamp: clock.now)
        case .refuse(let reason):
            result = .failure(for: command, error: reason, timestamp: clock.now)
        }
        logger.info(
            "Command \(result.ok ? "carried out" : "refused")",
            metadata: [
                "myeline.command": "\(command.id)", "myeline.intent": "\(command.intent.rawValue)",
                "myeline.activity": "\(result.activity ?? "-")", "myeline.reason": "\(result.error ?? "-")",
            ])
        reply(result)
    }

    /// Publishes a command result (QoS 1, not retained) without holding up the loop.
    private func reply(_ result: CommandResult) {
        let topic = topics.commandResult(device: device)
        let client = client
        let logger = logger
        Task {
            do {
                try await client.publish(
                    topic, payload: Array(try WireCodec.encode(result)), qos: .atLeastOnce,
                    properties: AgentService.json)
            } catch {
                logger.warning("Cannot publish a command result", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Ends an activity with its final content (no location) and the configured dismissal policy.
    /// Its dismissal date is saved first, so a restart clears it rather than resuming it.
    mutating func stop(_ activityID: String) async {
        guard let index = trips.firstIndex(where: { $0.id == activityID && $0.isRunning }) else { return }
        let now = clock.now
        let final = trips[index].tracker.stop(now: now)
        let policy = configuration.activity.dismissal.policy(endingAt: now)
        trips[index].pending = nil
        trips[index].dismissalDate = policy.dismissalDate(endedAt: now)
        trips[index].unsaved = true
        var none: [(topic: String, payload: [UInt8])] = []
        await flush(&none)
        do {
            try trips[index].activity.end(final, dismissalPolicy: policy)
            trips[index].lastSeq += 1
        } catch {
            logger.error("Cannot end the activity", metadata: ["error": "\(error)"])
        }
        center.refresh()
        logger.info(
            "Activity ended",
            metadata: [
                "myeline.activity": "\(activityID)",
                "myeline.dismissal": "\(trips[index].dismissalDate.map { "\($0)" } ?? "-")",
            ])
    }

    // MARK: - Clearing and orphans

    /// Clears the retained envelopes of activities that ended before a restart, once their dismissal date came.
    private mutating func clearDue(now: Date) {
        for (activityID, date) in clears where date <= now {
            clears[activityID] = nil
            finished.insert(activityID)
            clear(activityID, ending: nil)
        }
    }

    /// A retained message on one of this device's activity topics: one the agent does not know
    /// is an orphan (its state was lost, or another process published it), ended and cleared.
    private mutating func reconcile(activityID: String, payload: [UInt8]) {
        guard !payload.isEmpty, !trips.contains(where: { $0.id == activityID }), clears[activityID] == nil,
            !finished.contains(activityID)
        else { return }
        finished.insert(activityID)
        let envelope = try? WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(payload))
        let ending = envelope.flatMap { $0.header.event == .end ? nil : $0.ended(at: clock.now) }
        logger.warning(
            "Ending and clearing an activity this agent does not know",
            metadata: [
                "myeline.activity": "\(activityID)",
                "myeline.reason": "\(envelope == nil ? "its retained message does not decode" : "no saved state")",
            ])
        clear(activityID, ending: ending)
    }

    /// Publishes `ending` (if any) and then an empty retained message on the activity's topic,
    /// and reports the activity cleared.
    private func clear(_ activityID: String, ending: ActivityEnvelope<LocationActivityAttributes>?) {
        let topic = topics.activity(device: device, activityID: activityID)
        let (client, inputs, logger) = (client, inputs, logger)
        Task {
            do {
                if let ending {
                    try await client.publish(
                        topic, payload: Array(try WireCodec.encode(ending)), qos: .atLeastOnce, retain: true,
                        properties: AgentService.json)
                }
                try await client.publish(topic, payload: [], qos: .atLeastOnce, retain: true)
                inputs.post(.cleared(activityID: activityID))
            } catch {
                logger.warning(
                    "Cannot clear an activity's retained envelope",
                    metadata: ["myeline.activity": "\(activityID)", "error": "\(error)"])
            }
        }
    }

    /// Forgets an activity whose retained envelope is cleared, and its state file.
    private mutating func forget(_ activityID: String) async {
        trips.removeAll { $0.id == activityID }
        clears[activityID] = nil
        finished.insert(activityID)
        let store = ActivityStateStore<LocationActivityAttributes>(
            directory: activitiesDirectory, activityID: activityID, logger: logger)
        if let failure = await blocking.runCollectingFailure({ try store.remove() }) {
            logger.error("Cannot remove an activity's state file", metadata: ["error": "\(failure)"])
        }
    }

    // MARK: - Shutdown

    /// Ends the running activities (with `activity.end-on-exit`) or saves them for the next
    /// start, and waits, within `timeout`, for their last envelopes to be published.
    mutating func shutDown(timeout: Duration) async {
        for trip in trips where trip.isRunning {
            if configuration.activity.endOnExit {
                await stop(trip.id)
            } else {
                logger.info("Activity kept for the next start", metadata: ["myeline.activity": "\(trip.id)"])
            }
        }
        for index in trips.indices { trips[index].unsaved = true }
        var none: [(topic: String, payload: [UInt8])] = []
        await flush(&none)
        for trip in trips where trip.activity.activityState != .dismissed {
            if trip.publisher.stop(after: trip.lastSeq) { trip.publisherTask.cancel() }
        }
        let tasks = trips.map(\.publisherTask)
        guard client.isConnected else {
            for task in tasks { task.cancel() }
            logger.warning("Shutting down offline: the activities' last envelopes are not published")
            return
        }
        let published = await withTimeout(timeout) {
            for task in tasks { _ = await task.value }
        }
        if !published {
            logger.warning(
                "Shutting down before the activities' last envelopes were published",
                metadata: ["myeline.publishers": "\(trips.map { "\($0.id): \($0.publisher.state)" })"])
            for task in tasks { task.cancel() }
        }
        for trip in trips {
            if await trip.publisherTask.value { await forget(trip.id) }
        }
    }
}

extension BlockingQueue {
    /// Runs `body` on the queue; returns the description of the error it threw, or nil.
    func runCollectingFailure(_ body: @escaping @Sendable () throws -> Void) async -> String? {
        do {
            try await run(body)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
