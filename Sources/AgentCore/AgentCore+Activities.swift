import AgentStore
import FoundationEssentials
import Logging
import LiveActivity
import MyelineWire
import Location
import Tracking

extension AgentCore {
    // MARK: - Start

    /// Takes back the activities an earlier run saved: running ones resume with their id, seq and
    /// trip totals (and no location until the next fix); ended ones are cleared at their
    /// dismissal date. Track seqs come from the records or, when further, from the outbox's
    /// newest points (a crash between appending the points and saving the record).
    mutating func resume(_ saved: [Record], outboxTail: [OutboxRecord], now: Date, into batch: inout Batch) {
        for record in saved {
            records.insert(record.activityID)
            guard record.attributesType == Attributes.typeName, record.attributes.deviceID == settings.device else {
                batch.log(
                    .warning, "agent.saved.ignored", "Ignoring a saved activity of another device or type",
                    ["myeline.activity": record.activityID, "state.directory": settings.stateDirectory])
                continue
            }
            if let dismissal = record.dismissalDate {
                pendingClears[record.activityID] = dismissal
                continue
            }
            let trackTopic = settings.topics.track(device: settings.device, activityID: record.activityID)
            let trackSeq = outboxTail.filter { $0.topic == trackTopic }.compactMap {
                try? WireCodec.decode(TrackPoint.self, from: Data($0.payload)).seq
            }.reduce(record.trackSeq, max)
            var snapshot = try? JSONDecoder().decode(TripAccumulator.Snapshot.self, from: record.tripTotals)
            // A replay starts again from the top of its file: its first point does not follow the
            // last one counted before the restart.
            if settings.source == .replay { snapshot?.lastCounted = nil }
            var tracker = makeTracker(attributes: record.attributes, now: now, resuming: snapshot)
            let content = tracker.start(now: now).content ?? tracker.content(now: now)
            do throws(ActivityError) {
                try admit(record.activityID)
                let model = ActivityModel(
                    id: record.activityID, attributes: record.attributes, content: content, now: now,
                    resumingAfter: max(1, record.lastSeq))
                activities.append(
                    RunningActivity(model: model, tracker: tracker, trackSeq: trackSeq, trackTopic: trackTopic))
                batch.log(
                    .info, "agent.activity.resumed", "Activity resumed",
                    [
                        "myeline.activity": record.activityID, "myeline.seq": "\(model.lastEvent.seq)",
                        "myeline.trackSeq": "\(trackSeq)",
                    ])
            } catch {
                batch.log(
                    .error, "agent.activity.resume.failed", "Cannot resume a saved activity",
                    ["myeline.activity": record.activityID, "error": error.message])
            }
        }
    }

    /// Starts a new activity when none runs (autostart).
    mutating func startIfIdle(now: Date, into batch: inout Batch) {
        guard !activities.contains(where: \.isRunning) else { return }
        do throws(ActivityError) {
            _ = try start(id: nil, now: now, into: &batch)
        } catch {
            batch.log(.error, "agent.activity.start.failed", "Cannot start an activity", ["error": error.message])
        }
    }

    /// Starts a new activity with the tracker's first content (no location until a fix); a
    /// `start` command's attributes replace the configured ones, its status and relevance score
    /// are the content's (push-to-start).
    ///
    /// - Throws: `ActivityError` for an invalid or duplicate id, when the activity limit is
    ///   reached, or `.contentTooLarge` when the first content state is over 4 KiB as JSON.
    mutating func start(id: String?, command: Command? = nil, now: Date, into batch: inout Batch) throws(ActivityError)
        -> String
    {
        let id = id ?? makeID()
        try admit(id)
        var attributes = settings.attributes
        if let given = command?.attributes {
            attributes.name = given.name ?? attributes.name
            attributes.vehicle = given.vehicle ?? attributes.vehicle
            attributes.driver = given.driver ?? attributes.driver
            attributes.destination = given.destination ?? attributes.destination
        }
        let remote = TripAccumulator.Snapshot(status: command?.status, relevanceScore: command?.relevanceScore)
        var tracker = makeTracker(attributes: attributes, now: now, resuming: remote)
        let content = tracker.start(now: now).content ?? tracker.content(now: now)
        try ActivityModel<Attributes>.validateSize(of: content.state)
        let model = ActivityModel(id: id, attributes: attributes, content: content, now: now)
        activities.append(
            RunningActivity(
                model: model, tracker: tracker, trackSeq: 0,
                trackTopic: settings.topics.track(device: settings.device, activityID: id)))
        batch.log(
            .info, "agent.activity.started", "Activity started",
            ["myeline.device": settings.device.rawValue, "myeline.activity": id])
        return id
    }

    /// Checks that an activity with `id` may start: a valid id, none of the live activities has
    /// it, and fewer than the maximum are live (an ended activity counts until it is cleared, as
    /// ActivityKit counts it until it is dismissed).
    private func admit(_ id: String) throws(ActivityError) {
        try ActivityModel<Attributes>.validate(id: id)
        guard !activities.contains(where: { $0.id == id }), pendingClears[id] == nil else {
            throw ActivityError(.duplicateActivityID, "cannot start activity \"\(id)\": one with that id is live")
        }
        let live = activities.count + pendingClears.count
        guard live < settings.maximumActivities else {
            throw ActivityError(
                .tooManyActivities,
                "cannot start activity \"\(id)\": \(live) activities are live, the maximum is \(settings.maximumActivities)"
            )
        }
    }

    private func makeTracker(attributes: Attributes, now: Date, resuming snapshot: TripAccumulator.Snapshot?)
        -> Tracker
    {
        Tracker(
            attributes: attributes, policy: settings.policy, now: now, resuming: snapshot,
            tripClock: settings.source == .replay ? .recording : .wall)
    }

    // MARK: - Location and time

    /// A location update: a replay's fix is stamped with the wall clock (its recorded time, made
    /// one timeline across laps, times the trip); a receiver's fix is checked against the clock.
    mutating func receive(_ update: LocationUpdate, now: Date, into batch: inout Batch) {
        if watch.updated(at: clocks.uptime) {
            batch.log(.notice, "agent.source.back", "The location source reports again")
        }
        var update = update
        var recorded: Date?
        switch settings.source {
        case .replay:
            if let time = update.fix?.time ?? update.time { recorded = timeline.map(time) }
            if update.time != nil || update.fix != nil { update.time = now }
            update.fix?.time = now
        case .receiver:
            if let fix = update.fix { checkClock(fixTime: fix.time, now: now, into: &batch) }
        }
        if let fix = update.fix { batch.actions.append(.forward(fix)) }
        for index in activities.indices where activities[index].isRunning {
            collect(activities[index].tracker.receive(update, now: now, recordedAt: recorded), at: index, into: &batch)
        }
    }

    /// Lets time act: trackers' deadlines, dismissal dates, the source's silence.
    mutating func tick(now: Date, into batch: inout Batch) {
        for index in activities.indices {
            if activities[index].isRunning {
                guard let due = activities[index].tracker.nextDeadline, due <= now else { continue }
                collect(activities[index].tracker.tick(now: now), at: index, into: &batch)
            } else {
                for case .event(let event) in activities[index].model.tick(now: now) where event.kind == .dismissed {
                    batch.envelopes.append(.clear(activityID: activities[index].id))
                }
            }
        }
        for (activityID, date) in pendingClears where date <= now {
            pendingClears[activityID] = nil
            finished.insert(activityID)
            batch.envelopes.append(.clear(activityID: activityID))
        }
        guard watch.tick(now: clocks.uptime), activities.contains(where: \.isRunning) else { return }
        batch.log(
            .warning, "agent.source.silent",
            "The location source has said nothing for too long; the activity shows no location until it does",
            ["source.silence_s": watch.limit.map { "\($0)" } ?? "-"])
        // What gpsd reports when it cannot be reached: the tracker drops the position at once,
        // with no grace, so that no heartbeat shows an old position as current.
        let silent = LocationUpdate(noFix: .sourceUnavailable, time: now)
        for index in activities.indices where activities[index].isRunning {
            collect(activities[index].tracker.receive(silent, now: now), at: index, into: &batch)
        }
    }

    /// Takes a tracker's output for trip `index`: its track point joins the batch's.
    mutating func collect(_ output: Tracker.Output, at index: Int, into batch: inout Batch) {
        guard let fix = activities[index].take(output) else { return }
        let seq = activities[index].trackSeq
        let point = TrackPoint(fix: fix, device: settings.device, activity: activities[index].id, seq: seq)
        do {
            batch.points.append(
                TrackPointEntry(
                    topic: activities[index].trackTopic,
                    payload: Array(try WireCodec.encode(point)), seq: seq))
        } catch {
            batch.log(.error, "agent.point.encode.failed", "Cannot encode a track point", ["error": "\(error)"])
        }
    }

    // MARK: - Saving and publishing

    /// Applies the waiting updates, saves the batch's track points and every changed activity with
    /// one ``Action/persist(points:activities:)``, then publishes the envelopes: a seq is on disk
    /// before it reaches the broker, and never reused after a crash.
    mutating func flush(now: Date, into batch: inout Batch) {
        var envelopes: [Outgoing] = []
        for index in activities.indices {
            if activities[index].announce {
                activities[index].announce = false
                envelopes += outgoing(activities[index].model.lastEvent, now: now)
            }
            guard let pending = activities[index].pending else { continue }
            activities[index].pending = nil
            do throws(ActivityError) {
                let changes = try activities[index].model.update(pending.content, alert: pending.alert, now: now)
                for case .event(let event) in changes { envelopes += outgoing(event, now: now) }
            } catch {
                batch.log(
                    .error, "agent.activity.update.failed", "Cannot update the activity", ["error": error.message])
            }
        }
        var changed: [Record] = []
        var milestones: Set<String> = []
        for index in activities.indices where activities[index].unsaved {
            activities[index].unsaved = false
            if activities[index].milestone { milestones.insert(activities[index].id) }
            activities[index].milestone = false
            do {
                changed.append(try record(of: activities[index], now: now))
                records.insert(activities[index].id)
            } catch {
                batch.log(
                    .error, "agent.totals.encode.failed", "Cannot encode the activity totals", ["error": "\(error)"])
            }
        }
        if !changed.isEmpty || !batch.points.isEmpty {
            persisting = batch.points.count
            batch.actions.append(.persist(points: batch.points, activities: changed, milestones: milestones))
            if !batch.points.isEmpty { batch.actions.append(.deliverPoints) }
            batch.points = []
        }
        batch.actions += (batch.envelopes + envelopes).map(Action.publish)
        batch.envelopes = []
    }

    /// What publishes an event: its envelope (an end's with the message expiry of its dismissal
    /// date on MQTT 5), or the empty retained message of a dismissal.
    private func outgoing(_ event: ActivityEvent<Attributes>, now: Date) -> [Outgoing] {
        guard let envelope = ActivityEnvelope(event: event, device: settings.device) else {
            return [.clear(activityID: event.activityID)]
        }
        var expiry: UInt32?
        if settings.messageExpiry, case .end(_, let dismissal) = event.kind {
            expiry = ActivityWire.expiry(until: dismissal, from: now)
        }
        return [.envelope(envelope, expiry: expiry)]
    }

    /// The record to save for `activity` now; its trip totals are written without `JSONEncoder` (a
    /// record a fix: issue 24), in the bytes it gives with sorted keys.
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when a total is not a finite number.
    private func record(of activity: RunningActivity, now: Date) throws(AgentStoreError) -> Record {
        guard let totals = activity.tracker.snapshot(now: now).directJSON() else {
            throw AgentStoreError(
                .encoding, "the trip totals of activity \(activity.id) could not be encoded: a number is not finite")
        }
        return Record(
            activityID: activity.id, attributesType: Attributes.typeName, lastSeq: activity.model.lastEvent.seq,
            trackSeq: activity.trackSeq, attributes: activity.model.attributes, tripTotals: Data(totals),
            startedAt: activity.tracker.startedAt, dismissalDate: activity.dismissalDate)
    }

    // MARK: - End

    /// Ends an activity with its final content (no location) and the configured dismissal policy.
    /// Its dismissal date is saved before the end is published, so a restart clears it rather than
    /// resuming it.
    mutating func stop(_ activityID: String, now: Date, into batch: inout Batch) {
        guard let index = activities.firstIndex(where: { $0.id == activityID && $0.isRunning }) else { return }
        let final = activities[index].tracker.stop(now: now)
        let policy = settings.dismissal.policy(endingAt: now)
        activities[index].pending = nil
        do throws(ActivityError) {
            let changes = try activities[index].model.end(final, dismissalPolicy: policy, now: now)
            activities[index].dismissalDate = policy.dismissalDate(endedAt: now)
            activities[index].unsaved = true
            activities[index].milestone = true
            for case .event(let event) in changes { batch.envelopes += outgoing(event, now: now) }
        } catch {
            batch.log(.error, "agent.activity.end.failed", "Cannot end the activity", ["error": error.message])
            return
        }
        batch.log(
            .info, "agent.activity.ended", "Activity ended",
            [
                "myeline.activity": activityID,
                "myeline.dismissal": activities[index].dismissalDate.map { "\($0)" } ?? "-",
            ])
    }

    /// Ends the running activities (with `activity.end-on-exit`) or keeps them for the next start,
    /// saves every activity, and finishes.
    mutating func shutDown(failure: String?, now: Date, into batch: inout Batch) {
        // What the batch changed before the end is published first, as the last update.
        flush(now: now, into: &batch)
        for activity in activities where activity.isRunning {
            if settings.endOnExit {
                stop(activity.id, now: now, into: &batch)
            } else {
                batch.log(
                    .info, "agent.activity.kept", "Activity kept for the next start", ["myeline.activity": activity.id])
            }
        }
        for index in activities.indices { activities[index].unsaved = true }
        flush(now: now, into: &batch)
        isFinished = true
        batch.actions.append(
            .finish(
                failure: failure,
                farewell: .offline(device: settings.device, since: now, instance: settings.instance)))
    }
}
