import AgentStore
import FoundationEssentials
import LiveActivity
import MyelineWire
import Location
import Logging
import Tracking

/// Every decision of `myeline-agent run`, as one pure state machine: events in, actions out.
///
/// The shell (`MyelineAgentKit`'s control loop and services) reads the clocks, feeds the core what
/// happened with ``handle(_:now:uptime:)`` and performs the actions it returns, in order: it saves what
/// ``Action/persist(points:activities:)`` names before it publishes anything after it (a seq that
/// reached the broker is on disk), queues the messages, logs the log lines, and reports back what
/// the disk and the broker said (``Event/persisted(failure:dropped:)``, ``Event/cleared(activityID:)``).
/// It calls ``handle(_:now:uptime:)`` with ``Event/tick`` at ``nextDeadline``: the core is the one
/// place that owns time. It is given two clocks: the wall clock (`now`: timestamps, stale dates,
/// dismissal dates, the trackers' budget) and a monotonic one (`uptime`, seconds since any fixed
/// origin: how long the source has been silent), so that a stepped wall clock is no silence.
///
/// The core keeps the device's location activities: each an ``ActivityModel`` (the lifecycle and
/// its event numbering) with a ``Tracking/Tracker`` (what to publish when), its track seq and what
/// waits to be saved and published. It resumes the activities an earlier run saved, starts,
/// pauses, resumes, reports and stops them on the intents, ends and clears activities it does not
/// know (orphans), clears ended ones at their dismissal date (also after a restart), drops the
/// position when the source goes silent, judges the wall clock against a receiver's fixes, reports
/// the device's status and health, and notices a second agent with the same device id.
/// docs/agent.md describes the events and actions; `AgentCoreTests` are its tables.
public struct AgentCore: Sendable {
    /// The activities' attributes type.
    public typealias Attributes = LocationActivityAttributes
    /// What the core saves of an activity.
    public typealias Record = PersistedActivity<LocationActivityAttributes>

    /// What happened: everything the core reacts to.
    public enum Event: Hashable, Sendable {
        /// The agent starts: the activities an earlier run saved, the newest records of the outbox
        /// (their track seqs may be ahead of the saved ones after a crash), the outbox's count
        /// of points dropped when it was full, and the storage's count of power losses.
        case started(saved: [Record], outboxTail: [OutboxRecord], dropped: UInt64, powerLosses: UInt64 = 0)
        /// A location update from the source.
        case location(LocationUpdate)
        /// A looped replay starts its file again.
        case sourceLap
        /// The source ended (a replay without a loop), or failed with this description.
        case sourceEnded(failure: String?)
        /// Time passed: the shell calls at ``AgentCore/nextDeadline``, or whenever it likes.
        case tick
        /// A command that decoded, from the device's command topic.
        case command(Command)
        /// A command payload that did not decode: its `id` when one could be read, and why.
        case malformedCommand(id: String?, reason: String)
        /// A retained message on one of this device's activity topics (after each subscription).
        case retained(activityID: String, payload: [UInt8])
        /// A status on this device's own status topic, as retained or not.
        case status(StatusMessage, retained: Bool)
        /// An empty message on this device's own status topic: someone removed its retained status.
        case statusCleared
        /// The client connected to the broker.
        case connected(sessionPresent: Bool)
        /// The client lost its connection; `sessionTakenOver` when the broker said so (MQTT 5).
        case disconnected(sessionTakenOver: Bool)
        /// What the last ``Action/persist(points:activities:)`` did: the error's description when
        /// it failed, and the outbox's count of dropped points.
        case persisted(failure: String?, dropped: UInt64)
        /// An activity's empty retained message reached the broker: its retained envelope is gone.
        case cleared(activityID: String)
        /// Stop: SIGTERM or SIGINT.
        case shutdown
    }

    /// What to do, in order.
    public enum Action: Hashable, Sendable {
        /// Append these track points to the outbox and save these activities' records, before
        /// anything after this action is published; then report ``Event/persisted(failure:dropped:)``.
        /// `milestones` are the activities whose change is one a power cut must not lose
        /// (started, resumed, ended, paused or resumed by an intent): the storage writes them to
        /// the device at its next commit rather than only when it renews their seqs.
        case persist(points: [TrackPointEntry], activities: [Record], milestones: Set<String>)
        /// Publish a message (queued; the queue keeps the order and keeps only the newest of
        /// replaceable ones waiting, `LiveActivity`'s `PublishQueue`).
        case publish(Outgoing)
        /// Delete an activity's saved record: it is over.
        case removeState(activityID: String)
        /// Deliver the outbox's track points: there are new ones, or the client connected.
        case deliverPoints
        /// Make the client wait its longest reconnection delay after each loss: another agent
        /// uses this device id.
        case reconnectSlowly
        /// Hand a fix (with the time it is published under) to the integrations (OwnTracks, Home Assistant).
        case forward(LocationFix)
        /// Log a line.
        case log(LogEntry)
        /// The agent is done: publish what is queued and deliver the outbox within the drain bound,
        /// then publish `farewell` (the `offline` status) and stop; with a failure, exit non-zero.
        case finish(failure: String?, farewell: StatusMessage)
    }

    /// A message to publish.
    public enum Outgoing: Hashable, Sendable {
        /// An activity's envelope, retained at QoS 1 on its topic; on MQTT 5 with a message expiry
        /// in seconds (an ended activity's, at its dismissal date) when not nil.
        case envelope(ActivityEnvelope<Attributes>, expiry: UInt32?)
        /// An activity's empty retained message: it is dismissed, or an orphan cleared.
        case clear(activityID: String)
        /// The device's status, retained at QoS 1.
        case status(StatusMessage)
        /// A command result, QoS 1, not retained.
        case reply(CommandResult)
    }

    /// A track point to append to the outbox: the topic and the encoded point.
    public struct TrackPointEntry: Hashable, Sendable, OutboxContent {
        /// The activity's track topic.
        public var topic: String
        /// The encoded ``LiveActivity/TrackPoint``.
        public var payload: [UInt8]
        /// The point's seq.
        public var seq: Int

        /// Creates an entry.
        public init(topic: String, payload: [UInt8], seq: Int) {
            self.topic = topic
            self.payload = payload
            self.seq = seq
        }
    }

    /// A log line: level, constant message, dot-named metadata.
    public struct LogEntry: Hashable, Sendable {
        /// The level.
        public var level: Logger.Level
        /// The message.
        public var message: String
        /// The metadata, by dot-named key.
        public var metadata: [String: String]

        /// Creates a log line.
        public init(_ level: Logger.Level, _ message: String, _ metadata: [String: String] = [:]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    /// The settings the core was made with.
    public let settings: AgentCoreSettings
    /// The activities this process runs or has ended and not yet cleared, oldest first.
    public internal(set) var activities: [RunningActivity] = []
    /// Activities that ended before a restart, and when their retained envelope is to be cleared.
    public internal(set) var pendingClears: [String: Date] = [:]
    /// Whether the client is connected now.
    public internal(set) var isConnected = false
    /// Whether the client has been connected at all in this process.
    public var hasConnected: Bool { onlineSince != nil }
    /// Whether ``Action/finish(failure:farewell:)`` was returned: later events do nothing, but for
    /// the wind-down's ``Event/cleared(activityID:)`` and ``Event/persisted(failure:dropped:)``, and
    /// ``Event/connected(sessionPresent:)``.
    public internal(set) var isFinished = false

    /// Activities being cleared now, or over: known, so never taken for orphans.
    var finished: Set<String> = []
    /// The activities that have a saved record: loaded at the start, or saved since.
    var records: Set<String> = []
    /// What the core knows of a second agent with this device id.
    public internal(set) var conflict: ConflictDetector
    var statusCorrection = StatusCorrection()
    /// Unknown retained activities ended so far (at most ``maximumOrphans``).
    public internal(set) var orphansEnded = 0
    /// Retained messages of unknown activities left alone past ``maximumOrphans`` (each delivery
    /// counts: the broker sends them again after each subscription).
    public internal(set) var ignoredOrphans = 0
    var ignoredOrphansLogged = false
    var watch: SourceWatch
    var timeline = ReplayTimeline()
    var clockCheck: ClockCheck?
    var health = Health()
    /// Since when the client is connected (the status's `since`); nil before the first connection.
    var onlineSince: Date?
    /// How many track points the last ``Action/persist(points:activities:)`` appends.
    var persisting = 0
    /// The two clocks at the latest event, to put the silence's monotonic deadline on the wall clock.
    var clocks: (now: Date, uptime: TimeInterval)
    let makeID: @Sendable () -> String

    /// What the status says about the agent beside `online`.
    struct Health: Hashable, Sendable {
        /// Why saving fails now; nil while it works.
        var storageError: String?
        /// The wall clock's offset from the receiver in seconds; nil while they agree.
        var clockOffset: Int?
        /// Track points the outbox dropped when it was full.
        var dropped: UInt64 = 0
        /// Starts after a power cut that may have cost the points of the last commit interval.
        var powerLosses: UInt64 = 0
        /// Track points of batches that could not be saved since saving started failing.
        var unsavedPoints = 0
    }

    /// The longest `storage-error` the status carries (its schema's limit).
    public static let maximumStorageErrorLength = 1024

    /// Creates a core that starts at `now`.
    ///
    /// - Parameter makeID: new activity ids (a lowercased UUID in the agent; fixed ones in tests).
    public init(
        settings: AgentCoreSettings, now: Date, uptime: TimeInterval, makeID: @escaping @Sendable () -> String
    ) {
        self.settings = settings
        self.makeID = makeID
        clocks = (now, uptime)
        conflict = ConflictDetector(instance: settings.instance, startedAt: now)
        watch = SourceWatch(timeout: settings.silence, now: uptime)
        if settings.source == .receiver { clockCheck = ClockCheck() }
    }

    /// When the core next needs ``Event/tick``: a tracker's deadline (heartbeat, pending update,
    /// end of the no-fix grace), an ended activity's dismissal date, or the source's silence;
    /// nil when only an event can change anything.
    public var nextDeadline: Date? {
        var dates = pendingClears.map(\.value)
        for activity in activities {
            if activity.isRunning {
                if let date = activity.tracker.nextDeadline { dates.append(date) }
            } else if let date = activity.model.nextDeadline {
                dates.append(date)
            }
        }
        if activities.contains(where: \.isRunning), let silence = watch.deadline {
            dates.append(clocks.now.addingTimeInterval(silence - clocks.uptime))
        }
        return dates.min()
    }

    /// Takes one event at `now` (the wall clock) and `uptime` (seconds on a monotonic clock).
    public mutating func handle(_ event: Event, now: Date, uptime: TimeInterval) -> [Action] {
        handle([event], now: now, uptime: uptime)
    }

    /// Takes a batch of events at `now` (the wall clock) and `uptime` (seconds on a monotonic
    /// clock), in order, then saves and publishes what they changed with one
    /// ``Action/persist(points:activities:)``: a burst of fixes (a fast replay) is one write.
    public mutating func handle(_ events: [Event], now: Date, uptime: TimeInterval) -> [Action] {
        clocks = (now, uptime)
        var batch = Batch()
        for event in events {
            if isFinished {
                // Once finished, only what the shell reports back of the wind-down counts, and a
                // connection made meanwhile (a short replay can end before the first one is seen):
                // it is announced before the `offline` of the finish.
                switch event {
                case .cleared, .persisted, .connected: apply(event, now: now, to: &batch)
                default: continue
                }
            } else {
                apply(event, now: now, to: &batch)
            }
        }
        if !isFinished { flush(now: now, into: &batch) }
        reportIgnoredOrphans(into: &batch)
        return batch.actions
    }

    /// What one batch produces: the actions so far, and what waits for the batch's flush.
    struct Batch {
        var actions: [Action] = []
        /// Track points for the outbox.
        var points: [TrackPointEntry] = []
        /// Envelopes and clears to publish after the flush's persist.
        var envelopes: [Outgoing] = []

        /// A line for the agent's log, named by `event` (docs/logging.md): a constant `message`, the
        /// values in `metadata`.
        mutating func log(
            _ level: Logger.Level, _ event: String, _ message: String, _ metadata: [String: String] = [:]
        ) {
            actions.append(.log(LogEntry(level, message, metadata.merging(["event": event]) { value, _ in value })))
        }
    }

    private mutating func apply(_ event: Event, now: Date, to batch: inout Batch) {
        switch event {
        case .started(let saved, let tail, let dropped, let powerLosses):
            health.dropped = dropped
            health.powerLosses = powerLosses
            watch.restart(at: clocks.uptime)
            resume(saved, outboxTail: tail, now: now, into: &batch)
            if settings.autostart {
                startIfIdle(now: now, into: &batch)
            } else {
                batch.log(.info, "agent.autostart.off", "Autostart is off: waiting for a start command")
            }
        case .location(let update):
            receive(update, now: now, into: &batch)
        case .sourceLap:
            timeline.lapStarted()
            watch.restart(at: clocks.uptime)
            for index in activities.indices where activities[index].isRunning {
                activities[index].tracker.startSegment()
            }
            batch.log(.debug, "agent.source.lap", "The replay starts its file again")
        case .sourceEnded(let failure):
            if let failure {
                batch.log(.error, "agent.source.failed", "The location source failed", ["error": failure])
            } else {
                batch.log(.info, "agent.source.ended", "The location source ended")
            }
            shutDown(failure: failure, now: now, into: &batch)
        case .tick:
            tick(now: now, into: &batch)
        case .command(let command):
            flush(now: now, into: &batch)
            execute(command, now: now, into: &batch)
        case .malformedCommand(let id, let reason):
            batch.log(.warning, "agent.command.malformed", "Refusing a malformed command", ["myeline.reason": reason])
            if let id { batch.actions.append(.publish(.reply(.malformed(id: id, error: reason, timestamp: now)))) }
        case .retained(let activityID, let payload):
            reconcile(activityID: activityID, payload: payload, now: now, into: &batch)
        case .status(let status, let retained):
            report(conflict.observe(status, retained: retained), into: &batch)
            correctStatus(status, retained: retained, now: now, into: &batch)
        case .statusCleared:
            restoreStatus(now: now, into: &batch)
        case .connected:
            isConnected = true
            onlineSince = now
            conflict.connected()
            batch.log(.info, "agent.connected", "Connected to the broker")
            publishOnline(now: now, into: &batch)
            if !isFinished { batch.actions.append(.deliverPoints) }
        case .disconnected(let sessionTakenOver):
            isConnected = false
            report(conflict.disconnected(sessionTakenOver: sessionTakenOver), into: &batch)
        case .persisted(let failure, let dropped):
            health.dropped = dropped
            storage(failure, now: now, into: &batch)
        case .cleared(let activityID):
            forget(activityID, into: &batch)
        case .shutdown:
            shutDown(failure: nil, now: now, into: &batch)
        }
    }
}
