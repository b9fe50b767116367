import FoundationEssentials

import Glibc

/// Fills in the speed and course of fixes whose source did not report them (a GPX track without
/// `<speed>`, a receiver that sends GGA but no RMC or VTG), from the positions of consecutive
/// fixes: a pure state machine, fed the fixes a source passes, in order.
///
/// The reference for a fix is the most recent fix at least ``Configuration/window`` seconds before
/// it or, when none is that old, the oldest fix since the last gap (fixes more than
/// ``Configuration/maximumInterval`` apart). Speed is the great-circle distance from the reference
/// divided by the time between them, if that time is at least ``Configuration/minimumInterval``;
/// course is the initial bearing from the reference, if the distance is at least
/// ``Configuration/minimumDistance`` (below it, receiver noise would decide the direction). Values
/// the source reported are never replaced; derived ones are marked in ``LocationFix/derived``. A
/// gap longer than the maximum interval, or time going backwards, starts afresh.
public struct MotionEstimator: Sendable {
    /// The rules for deriving motion.
    public struct Configuration: Hashable, Sendable {
        /// The span, in seconds, over which speed and course are measured when fixes come faster
        /// (5 s by default): long enough that a stationary receiver's noise of a metre or two gives
        /// well under 1 m/s.
        public var window: Double
        /// The shortest time, in seconds, over which a speed is computed (1 s by default).
        public var minimumInterval: Double
        /// The longest time, in seconds, between two fixes for a speed or course between them (60 s by
        /// default): over longer gaps the straight line says little of the way taken.
        public var maximumInterval: Double
        /// The shortest distance, in metres, that gives a course (5 m by default).
        public var minimumDistance: Double

        /// Creates a configuration; the defaults suit a receiver or a track logged every 1 to 30 s.
        public init(
            window: Double = 5, minimumInterval: Double = 1, maximumInterval: Double = 60, minimumDistance: Double = 5
        ) {
            self.window = window
            self.minimumInterval = minimumInterval
            self.maximumInterval = maximumInterval
            self.minimumDistance = minimumDistance
        }
    }

    /// The rules in force.
    public var configuration: Configuration
    /// The recent fixes (time in seconds since 1970, latitude, longitude), oldest first.
    private var recent: [(time: Double, latitude: Double, longitude: Double)] = []
    private static let capacity = 64

    /// Creates an estimator.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Returns `fix` with its missing speed and course derived where the rules allow, and
    /// remembers it for the fixes after it.
    public mutating func estimate(_ fix: LocationFix) -> LocationFix {
        let time = fix.time.timeIntervalSince1970
        if let last = recent.last, !(time > last.time && time - last.time <= configuration.maximumInterval) {
            recent.removeAll(keepingCapacity: true)
        }
        var result = fix
        if fix.speed == nil || fix.course == nil, let reference = reference(before: time) {
            let interval = time - reference.time
            let distance = Self.distance(reference.latitude, reference.longitude, fix.latitude, fix.longitude)
            if fix.speed == nil, interval >= configuration.minimumInterval {
                result.speed = distance / interval
                result.derived.insert(.speed)
            }
            if fix.course == nil, distance >= configuration.minimumDistance {
                result.course = Self.bearing(reference.latitude, reference.longitude, fix.latitude, fix.longitude)
                result.derived.insert(.course)
            }
        }
        if recent.count == Self.capacity { recent.removeFirst() }
        recent.append((time, fix.latitude, fix.longitude))
        return result
    }

    /// Forgets the fixes so far (a new lap, a new connection).
    public mutating func reset() {
        recent.removeAll(keepingCapacity: true)
    }

    private mutating func reference(before time: Double) -> (time: Double, latitude: Double, longitude: Double)? {
        while recent.count > 1, time - recent[1].time >= configuration.window { recent.removeFirst() }
        return recent.first
    }

    /// The mean Earth radius, in metres (IUGG).
    static let earthRadius = 6_371_008.8

    /// The great-circle distance in metres between two positions in degrees (haversine).
    static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double
    {
        let radians = Double.pi / 180
        let dLatitude = (latitude2 - latitude1) * radians
        let dLongitude = (longitude2 - longitude1) * radians
        let a =
            sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(latitude1 * radians) * cos(latitude2 * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// The initial bearing in degrees true (0 ..< 360) from the first position to the second.
    static func bearing(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double
    {
        let radians = Double.pi / 180
        let φ1 = latitude1 * radians
        let φ2 = latitude2 * radians
        let dλ = (longitude2 - longitude1) * radians
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        let degrees = atan2(y, x) / radians
        return degrees < 0 ? degrees + 360 : (degrees >= 360 ? degrees - 360 : degrees)
    }
}
