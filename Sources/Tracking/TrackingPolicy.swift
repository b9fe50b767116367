import FoundationEssentials

/// The numbers that drive a ``Tracker``: update budget, stale date, no-fix grace, jitter, speed
/// and alerts. A plain value with defaults; the agent fills it from its configuration
/// (`updates.*`, `alerts.*`).
public struct TrackingPolicy: Hashable, Sendable {
    /// Publish when the shown position moved at least this far since the last publish, in metres
    /// (`updates.min-distance`, 25).
    public var minimumDistance: Double
    /// Publish at most once per this many seconds, except alerts and lifecycle changes
    /// (`updates.min-interval`, 5).
    public var minimumInterval: TimeInterval
    /// Publish at least every this many seconds, even standing still (`updates.heartbeat`, 60).
    public var heartbeat: TimeInterval
    /// The stale date is the last fix time plus this many seconds (`updates.stale-after`, 3 × heartbeat).
    public var staleAfter: TimeInterval
    /// After this many seconds without a fix, show content without a location (`updates.no-fix-grace`, 30).
    public var noFixGrace: TimeInterval
    /// The smallest move in metres that adds to the trip distance, used as is when no accuracy
    /// is known and as a floor when it is (5).
    public var jitterFloor: Double
    /// The window in seconds over which the recent speed for the ETA is averaged (60).
    public var speedWindow: TimeInterval
    /// Below this recent speed in m/s the tracker counts as stopped and gives no ETA (0.5).
    public var stoppedSpeed: Double
    /// The geofences whose entry and exit raise alerts (`alerts.geofences`).
    public var geofences: [Geofence]
    /// How many fixes in a row must be beyond a fence's threshold before it counts as crossed (2, at least 1).
    public var geofenceConfirmations: Int
    /// The overspeed alert, or nil for none (`alerts.overspeed.*`).
    public var overspeed: Overspeed?
    /// The relevance score of every content (the device's priority); higher is more important.
    public var relevanceScore: Double

    /// Creates a policy; the defaults are those of the agent's configuration.
    ///
    /// - Parameter staleAfter: seconds; nil for 3 × `heartbeat`.
    public init(
        minimumDistance: Double = 25, minimumInterval: TimeInterval = 5, heartbeat: TimeInterval = 60,
        staleAfter: TimeInterval? = nil, noFixGrace: TimeInterval = 30, jitterFloor: Double = 5,
        speedWindow: TimeInterval = 60, stoppedSpeed: Double = 0.5, geofences: [Geofence] = [],
        geofenceConfirmations: Int = 2, overspeed: Overspeed? = nil, relevanceScore: Double = 0
    ) {
        self.minimumDistance = minimumDistance
        self.minimumInterval = minimumInterval
        self.heartbeat = heartbeat
        self.staleAfter = staleAfter ?? 3 * heartbeat
        self.noFixGrace = noFixGrace
        self.jitterFloor = jitterFloor
        self.speedWindow = speedWindow
        self.stoppedSpeed = stoppedSpeed
        self.geofences = geofences
        self.geofenceConfirmations = max(1, geofenceConfirmations)
        self.overspeed = overspeed
        self.relevanceScore = relevanceScore
    }
}

/// A circular fence: entering or leaving it raises an alert.
public struct Geofence: Codable, Hashable, Sendable {
    /// The fence's display name, such as `Depot`; it appears in alert titles.
    public var name: String
    /// The centre of the circle.
    public var center: Coordinate
    /// The radius in metres, greater than 0.
    public var radius: Double

    /// Creates a fence from a name, a centre and a radius in metres.
    public init(name: String, center: Coordinate, radius: Double) {
        self.name = name
        self.center = center
        self.radius = radius
    }

    /// The hysteresis margin in metres: the tracker leaves the fence only beyond `radius + margin`,
    /// where margin is the larger of 10 m and 10 % of the radius.
    public var exitMargin: Double { max(10, 0.1 * radius) }
}

/// The overspeed alert's numbers.
public struct Overspeed: Hashable, Sendable {
    /// The speed limit in m/s (`alerts.overspeed.threshold`).
    public var threshold: Double
    /// How many seconds the speed must stay above the threshold (`alerts.overspeed.duration`, 5).
    public var duration: TimeInterval
    /// The alert re-arms once the speed falls below `threshold - rearmMargin`, in m/s
    /// (default: the larger of 1 m/s and 10 % of the threshold).
    public var rearmMargin: Double

    /// Creates the overspeed numbers.
    ///
    /// - Parameters:
    ///   - threshold: m/s.
    ///   - duration: seconds.
    ///   - rearmMargin: m/s; nil for max(1, 0.1 × threshold).
    public init(threshold: Double, duration: TimeInterval = 5, rearmMargin: Double? = nil) {
        self.threshold = threshold
        self.duration = duration
        self.rearmMargin = rearmMargin ?? max(1, 0.1 * threshold)
    }
}
