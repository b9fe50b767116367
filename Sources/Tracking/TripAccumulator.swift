import FoundationEssentials
import LiveActivity
import Location

/// Adds up a trip from its fixes: distance without jitter, elapsed time without pauses, and,
/// with a destination, remaining distance, progress and ETA. A pure value: it reads no clock.
///
/// Rules (docs/tracking.md):
/// - **Distance**: the first fix is the first counted point. A later fix counts, adding its
///   haversine distance from the last counted point, only when that distance is greater than the
///   jitter threshold `max(jitterFloor, fix accuracy + last counted point's accuracy)`: two fixes
///   of a standing receiver, each within its accuracy of the true position, are at most the sum of
///   their accuracies apart. Unknown accuracies count as 0, so the floor applies. A fix that does
///   not count is not a new counted point, so slow movement still adds up once it leaves the threshold.
/// - **Elapsed**: seconds while not paused, from the trip's start (or its resumption after a
///   restart) to `now`.
/// - **Pause**: no distance while paused; every fix then moves the counted point, so moving while
///   paused adds nothing after the resume.
/// - **Progress**: `1 - remaining / start`, clamped to 0...1, where start is the distance to the
///   destination at the trip's first fix (1 when that was 0).
/// - **ETA**: the latest fix time plus remaining distance / recent speed; none when the recent
///   speed is below `stoppedSpeed`. The recent speed is the mean of the speeds the fixes of the
///   last `speedWindow` seconds report, or, if none reports one, the counted distance over that window
///   divided by its duration.
public struct TripAccumulator: Sendable {
    /// The totals of a trip, to persist and resume it after a restart.
    public struct Snapshot: Codable, Hashable, Sendable {
        /// Distance travelled in metres.
        public var distance: Double
        /// Seconds travelled, pauses excluded, when the snapshot was taken.
        public var elapsed: TimeInterval
        /// Whether the trip was paused.
        public var paused: Bool
        /// The last point that counted for the distance, if any.
        public var lastCounted: Coordinate?
        /// That point's horizontal accuracy in metres, if known.
        public var lastCountedAccuracy: Double?
        /// The distance to the destination at the trip's first fix in metres; nil before it or
        /// without a destination.
        public var startDistance: Double?
        /// The destination a push update set, over the attributes' one; nil when none did.
        /// Kept here, with the totals, so that a restart keeps it (the ``Tracker``'s, not the
        /// accumulator's, which takes its destination as a coordinate).
        public var destination: LocationActivityAttributes.Destination?
        /// The status text set from afar; nil when none was (the ``Tracker``'s).
        public var status: String?
        /// The relevance score set from afar; nil: the policy's (the ``Tracker``'s).
        public var relevanceScore: Double?

        /// Creates a snapshot; a new trip is all zeros and nils.
        public init(
            distance: Double = 0, elapsed: TimeInterval = 0, paused: Bool = false, lastCounted: Coordinate? = nil,
            lastCountedAccuracy: Double? = nil, startDistance: Double? = nil,
            destination: LocationActivityAttributes.Destination? = nil, status: String? = nil,
            relevanceScore: Double? = nil
        ) {
            self.distance = distance
            self.elapsed = elapsed
            self.paused = paused
            self.lastCounted = lastCounted
            self.lastCountedAccuracy = lastCountedAccuracy
            self.startDistance = startDistance
            self.destination = destination
            self.status = status
            self.relevanceScore = relevanceScore
        }
    }

    private struct Sample: Sendable {
        var time: Date
        var distance: Double
        var speed: Double?
    }

    /// Where the trip is going, if anywhere; ``retarget(_:)`` changes it.
    public private(set) var destination: Coordinate?
    /// Distance travelled in metres.
    public private(set) var distance: Double
    /// Whether the trip is paused.
    public private(set) var isPaused: Bool
    /// The latest fix's position, counted or not; nil before the first fix.
    public private(set) var position: Coordinate?
    /// The latest fix's time, UTC; nil before the first fix.
    public private(set) var lastFixTime: Date?

    /// Since when the running trip counts elapsed time (its start, resumption or unpause); nil while paused.
    public private(set) var runningSince: Date?

    private let policy: TrackingPolicy
    private var elapsedBefore: TimeInterval
    private var lastCounted: Coordinate?
    private var lastCountedAccuracy: Double?
    private var startDistance: Double?
    private var samples: [Sample] = []

    /// Starts a trip at `now`, running unless `paused`.
    public init(policy: TrackingPolicy, destination: Coordinate?, startedAt now: Date, paused: Bool = false) {
        self.init(resuming: Snapshot(paused: paused), policy: policy, destination: destination, now: now)
    }

    /// Resumes a trip from its snapshot at `now`: the time the agent was down does not count as elapsed.
    public init(resuming snapshot: Snapshot, policy: TrackingPolicy, destination: Coordinate?, now: Date) {
        self.policy = policy
        self.destination = destination
        distance = max(0, snapshot.distance)
        elapsedBefore = max(0, snapshot.elapsed)
        isPaused = snapshot.paused
        runningSince = snapshot.paused ? nil : now
        lastCounted = snapshot.lastCounted
        lastCountedAccuracy = snapshot.lastCountedAccuracy
        startDistance = destination == nil ? nil : snapshot.startDistance
    }

    /// The totals at `now`, to persist.
    public func snapshot(now: Date) -> Snapshot {
        Snapshot(
            distance: distance, elapsed: elapsed(now: now), paused: isPaused, lastCounted: lastCounted,
            lastCountedAccuracy: lastCountedAccuracy, startDistance: startDistance)
    }

    /// Adds a fix; returns whether it added to the distance.
    @discardableResult
    public mutating func add(_ fix: LocationFix) -> Bool {
        let point = Coordinate(fix)
        let accuracy = fix.horizontalAccuracy.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        position = point
        lastFixTime = fix.time
        if let destination, startDistance == nil { startDistance = point.distance(to: destination) }
        guard !isPaused, let last = lastCounted else {
            lastCounted = point
            lastCountedAccuracy = accuracy
            return false
        }
        let moved = last.distance(to: point)
        let threshold = max(policy.jitterFloor, (accuracy ?? 0) + (lastCountedAccuracy ?? 0))
        var counted = false
        if moved > threshold {
            distance += moved
            lastCounted = point
            lastCountedAccuracy = accuracy
            counted = true
        }
        record(Sample(time: fix.time, distance: distance, speed: fix.speed.flatMap { $0 >= 0 ? $0 : nil }))
        return counted
    }

    /// Pauses the trip at `now`; returns false if it already was paused.
    @discardableResult
    public mutating func pause(now: Date) -> Bool {
        guard !isPaused else { return false }
        elapsedBefore = elapsed(now: now)
        runningSince = nil
        isPaused = true
        samples.removeAll()
        return true
    }

    /// Resumes the trip at `now`; returns false if it was not paused.
    @discardableResult
    public mutating func resume(now: Date) -> Bool {
        guard isPaused else { return false }
        isPaused = false
        runningSince = now
        return true
    }

    /// Breaks the track: the next fix is a first counted point, with no distance from the last one.
    ///
    /// For a discontinuity that is not a movement: a replay that starts again from the top of its
    /// file (a loop, or the agent restarted on a replay), where the straight line from the last
    /// point to the file's first is no distance travelled.
    public mutating func startSegment() {
        lastCounted = nil
        lastCountedAccuracy = nil
        samples.removeAll()
    }

    /// Moves the elapsed clock's origin to `date`, keeping the time counted so far: a running trip
    /// counts on from `date`. For a trip timed by a recording's times rather than the wall clock
    /// (a replay), whose first time is only known at its first fix.
    public mutating func restartClock(at date: Date) {
        guard runningSince != nil else { return }
        runningSince = date
    }

    /// Sends the trip to another destination (a push update): progress counts from the latest fix
    /// (0 there), or from the next fix when there is none yet.
    public mutating func retarget(_ destination: Coordinate?) {
        self.destination = destination
        startDistance = destination.flatMap { destination in position.map { $0.distance(to: destination) } }
    }

    /// Forgets the recent speed, for when the fixes stop: the next ETA waits for new fixes.
    public mutating func forgetRecentSpeed() {
        samples.removeAll()
    }

    /// Seconds travelled at `now`, pauses excluded; never negative, even if the clock went back.
    public func elapsed(now: Date) -> TimeInterval {
        elapsedBefore + (runningSince.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }

    /// The distance in metres from the latest fix to the destination; nil without either.
    public var remainingDistance: Double? {
        guard let destination, let position else { return nil }
        return position.distance(to: destination)
    }

    /// How much of the way is done, 0...1; nil without a destination or before the first fix.
    public var progress: Double? {
        guard let remaining = remainingDistance, let start = startDistance else { return nil }
        guard start > 0 else { return 1 }
        return min(1, max(0, 1 - remaining / start))
    }

    /// The recent speed in m/s over the last `speedWindow` seconds of fixes; nil without enough fixes.
    public var recentSpeed: Double? {
        let reported = samples.compactMap(\.speed)
        if !reported.isEmpty { return reported.reduce(0, +) / Double(reported.count) }
        guard let first = samples.first, let last = samples.last else { return nil }
        let span = last.time.timeIntervalSince(first.time)
        guard span > 0 else { return nil }
        return (last.distance - first.distance) / span
    }

    /// The estimated time of arrival: the latest fix time plus remaining distance / recent speed;
    /// nil without a destination or when the recent speed is below `stoppedSpeed` (or unknown).
    public var eta: Date? {
        guard let remaining = remainingDistance, let time = lastFixTime, let speed = recentSpeed,
            speed >= policy.stoppedSpeed, speed > 0
        else { return nil }
        return time.addingTimeInterval(remaining / speed)
    }

    private mutating func record(_ sample: Sample) {
        samples.append(sample)
        let horizon = sample.time.addingTimeInterval(-policy.speedWindow)
        if let keep = samples.firstIndex(where: { $0.time >= horizon }), keep > 0 {
            samples.removeFirst(keep)
        }
    }
}
