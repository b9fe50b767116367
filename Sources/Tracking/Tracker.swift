import FoundationEssentials
import LiveActivity
import Location

/// One location activity's tracking policy in a single pure state machine: it combines
/// ``TripAccumulator``, ``NoFixMonitor``, ``AlertMonitor`` and ``UpdateBudget`` and says, for every
/// event, what the agent publishes. It reads no clock: every method takes `now` (UTC, seconds on
/// one timeline with the fixes' times).
///
/// The agent calls ``start(now:)`` once, ``receive(_:now:)`` for each location update,
/// ``pause(now:)``/``resume(now:)`` for the intents, ``tick(now:)`` at ``nextDeadline`` (heartbeat,
/// pending change, end of the no-fix grace), and ``stop(now:)`` for the final content. It publishes
/// ``Output/content`` when not nil, with ``Output/alert``, and sends ``Output/trackFix`` to the
/// track topic.
public struct Tracker: Sendable {
    /// The content state of a location activity.
    public typealias ContentState = LocationActivityAttributes.ContentState

    /// Which clock the trip's elapsed time runs on.
    public enum TripClock: Hashable, Sendable {
        /// The wall clock (a live receiver): elapsed counts from the start to `now`, pauses excluded.
        case wall
        /// The recording's own times (a replay, at whatever speed): elapsed counts the recorded
        /// time from the first fix to the latest (`recordedAt` of ``Tracker/receive(_:now:recordedAt:)``),
        /// pauses excluded; it stands still between fixes.
        case recording
    }

    /// What one event asks the agent to do.
    public struct Output: Hashable, Sendable {
        /// The budget's decision and its reason, for logs.
        public var decision: UpdateBudget.Decision
        /// The content to publish; nil when ``decision`` skips.
        public var content: ActivityContent<ContentState>?
        /// The alert to publish with ``content``, if any (several events are joined into one).
        public var alert: AlertConfiguration?
        /// The events behind ``alert``.
        public var events: [AlertMonitor.Event]
        /// The fix to send as a track point: every accepted fix while not paused; nil otherwise.
        public var trackFix: LocationFix?
    }

    /// The activity's attributes: the device name for alerts, the destination for progress and ETA.
    public let attributes: LocationActivityAttributes
    /// The numbers in force.
    public let policy: TrackingPolicy
    /// The trip so far.
    public private(set) var trip: TripAccumulator
    /// The location state.
    public private(set) var location: NoFixMonitor
    /// The alert state.
    public private(set) var alerts: AlertMonitor
    /// The update budget.
    public private(set) var budget: UpdateBudget
    /// When the tracker started (or resumed after a restart): the stale date's base before the first fix.
    public let startedAt: Date
    /// The time of the latest fix, UTC; nil before the first.
    public private(set) var lastFixTime: Date?
    /// The clock elapsed time runs on.
    public let tripClock: TripClock
    /// With ``TripClock/recording``: the recorded time of the latest fix; nil before the first.
    private var recordedNow: Date?
    /// What a push update (or a push-to-start) set: the destination, the status text, the
    /// relevance score; kept in the snapshot.
    public private(set) var remote = Remote()

    /// The content a server set from afar, over the attributes and the policy.
    public struct Remote: Hashable, Sendable {
        /// The destination, over the attributes' one; nil: the attributes'.
        public var destination: LocationActivityAttributes.Destination?
        /// The status text; nil: none.
        public var status: String?
        /// The relevance score; nil: the policy's.
        public var relevanceScore: Double?

        /// Changes set from afar; nil ones are not set.
        public init(
            destination: LocationActivityAttributes.Destination? = nil, status: String? = nil,
            relevanceScore: Double? = nil
        ) {
            self.destination = destination
            self.status = status
            self.relevanceScore = relevanceScore
        }
    }

    /// Creates a tracker for a new trip, or resumes one from a persisted snapshot, at `now`.
    public init(
        attributes: LocationActivityAttributes, policy: TrackingPolicy, now: Date,
        resuming snapshot: TripAccumulator.Snapshot? = nil, tripClock: TripClock = .wall
    ) {
        self.attributes = attributes
        self.policy = policy
        self.tripClock = tripClock
        startedAt = now
        remote = Remote(
            destination: snapshot?.destination, status: snapshot?.status, relevanceScore: snapshot?.relevanceScore)
        let destination = (remote.destination ?? attributes.destination).map(Coordinate.init)
        trip = TripAccumulator(
            resuming: snapshot ?? TripAccumulator.Snapshot(), policy: policy, destination: destination, now: now)
        location = NoFixMonitor(grace: policy.noFixGrace)
        alerts = AlertMonitor(policy: policy)
        budget = UpdateBudget(policy: policy)
    }

    /// The first content of the activity (or of its resumption): no location until a fix; always published.
    public mutating func start(now: Date) -> Output {
        output(change: .lifecycle, now: now)
    }

    /// Takes one location update (already through the source's fix gate).
    ///
    /// - Parameter recordedAt: with ``TripClock/recording``, the time the recording gives this
    ///   update (the fix's time is the wall clock's, for the content); ignored with ``TripClock/wall``.
    public mutating func receive(_ update: LocationUpdate, now: Date, recordedAt: Date? = nil) -> Output {
        var change = UpdateBudget.Change.none
        var events: [AlertMonitor.Event] = []
        var trackFix: LocationFix?
        if tripClock == .recording, let recordedAt, update.fix != nil {
            if recordedNow == nil { trip.restartClock(at: recordedAt) }
            recordedNow = max(recordedNow ?? recordedAt, recordedAt)
        }
        switch location.receive(update, now: now) {
        case .located(let fix):
            lastFixTime = fix.time
            trip.add(fix)
            if !trip.isPaused { trackFix = fix }
            events = alerts.receive(fix)
        case .lost:
            change = .state
            lostFix()
        case .holding, .stillLost:
            break
        }
        if !events.isEmpty { change = .alert }
        return output(change: change, events: events, trackFix: trackFix, now: now)
    }

    /// Pauses the trip: no more distance, elapsed time or track points until ``resume(now:)``.
    /// A state change when it was running; a plain budget check when already paused.
    public mutating func pause(now: Date) -> Output {
        output(change: trip.pause(now: tripTime(now)) ? .state : .none, now: now)
    }

    /// Resumes a paused trip. A state change when it was paused; a plain budget check otherwise.
    public mutating func resume(now: Date) -> Output {
        output(change: trip.resume(now: tripTime(now)) ? .state : .none, now: now)
    }

    /// Applies what a server pushed (the non-nil members of `changes`): a new destination (progress
    /// and ETA count toward it from the latest fix), a status text, a relevance score. A state
    /// change: published at once, within the budget's minimum interval.
    ///
    /// - Parameter alerting: whether an alert goes with the change: published at once, as an
    ///   alert of the tracker's own is.
    public mutating func change(_ changes: Remote, alerting: Bool = false, now: Date) -> Output {
        if let destination = changes.destination {
            remote.destination = destination
            trip.retarget(Coordinate(destination))
        }
        if let status = changes.status { remote.status = status }
        if let relevanceScore = changes.relevanceScore { remote.relevanceScore = relevanceScore }
        return output(change: alerting ? .alert : .state, now: now)
    }

    /// Breaks the track (``TripAccumulator/startSegment()``): the replay starts again from the top of
    /// its file, and the jump back to its first point is not distance travelled.
    public mutating func startSegment() {
        trip.startSegment()
    }

    /// Lets time pass without an update: ends the no-fix grace and publishes heartbeats and pending changes when due.
    public mutating func tick(now: Date) -> Output {
        var change = UpdateBudget.Change.none
        if location.tick(now: now) != nil {
            change = .state
            lostFix()
        }
        return output(change: change, now: now)
    }

    /// The final content, as the iOS app ends its activity: without a location, trip totals kept.
    public mutating func stop(now: Date) -> ActivityContent<ContentState> {
        _ = budget.decide(position: nil, change: .lifecycle, now: now)
        var content = content(now: now)
        content.state = Self.withoutLocation(content.state)
        return content
    }

    /// When to call ``tick(now:)`` next: the earlier of the end of the no-fix grace and the budget's deadline.
    public var nextDeadline: Date? {
        [location.nextDeadline, budget.nextDeadline].compactMap(\.self).min()
    }

    /// The trip totals at `now`, to persist.
    public func snapshot(now: Date) -> TripAccumulator.Snapshot {
        var snapshot = trip.snapshot(now: tripTime(now))
        snapshot.destination = remote.destination
        snapshot.status = remote.status
        snapshot.relevanceScore = remote.relevanceScore
        return snapshot
    }

    /// `now` on the trip's clock: the wall clock's, or the latest recorded time (the trip's origin
    /// before the first fix).
    private func tripTime(_ now: Date) -> Date {
        switch tripClock {
        case .wall: now
        case .recording: recordedNow ?? trip.runningSince ?? now
        }
    }

    /// The stale date: the last fix time (or the start, before any fix) plus `staleAfter`.
    public var staleDate: Date {
        (lastFixTime ?? startedAt).addingTimeInterval(policy.staleAfter)
    }

    /// The content the activity shows at `now`, published or not.
    public func content(now: Date) -> ActivityContent<ContentState> {
        var state = ContentState(
            distance: trip.distance, elapsed: trip.elapsed(now: tripTime(now)), paused: trip.isPaused,
            progress: trip.progress, destination: remote.destination, status: remote.status)
        if let fix = location.fix {
            state.latitude = fix.latitude
            state.longitude = fix.longitude
            state.altitude = fix.altitude
            state.speed = fix.speed.flatMap { $0 >= 0 ? $0 : nil }
            state.course = fix.course.flatMap { (0...360).contains($0) ? $0 : nil }
            state.horizontalAccuracy = fix.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil }
            state.fix = FixMode(fix.mode)
            state.satellites = fix.satellitesUsed.flatMap { $0 >= 0 ? $0 : nil }
            state.fixTime = fix.time
            state.eta = trip.eta
        }
        return ActivityContent(
            state: state, staleDate: staleDate, relevanceScore: remote.relevanceScore ?? policy.relevanceScore)
    }

    private mutating func lostFix() {
        trip.forgetRecentSpeed()
        alerts.lostFix()
    }

    private mutating func output(
        change: UpdateBudget.Change, events: [AlertMonitor.Event] = [], trackFix: LocationFix? = nil, now: Date
    ) -> Output {
        let content = content(now: now)
        let position = content.state.latitude.flatMap { latitude in
            content.state.longitude.map { Coordinate(latitude: latitude, longitude: $0) }
        }
        let decision = budget.decide(position: position, change: change, now: now)
        let alerts = events.map { $0.alert(deviceName: attributes.name) }
        let alert =
            alerts.isEmpty
            ? nil
            : AlertConfiguration(
                title: alerts.map(\.title).joined(separator: " · "), body: alerts.map(\.body).joined(separator: " "))
        return Output(
            decision: decision, content: decision.publishes ? content : nil, alert: alert, events: events,
            trackFix: trackFix)
    }

    private static func withoutLocation(_ state: ContentState) -> ContentState {
        ContentState(
            distance: state.distance, elapsed: state.elapsed, paused: state.paused, progress: state.progress,
            destination: state.destination, status: state.status)
    }
}
