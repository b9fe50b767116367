import FoundationEssentials
import LiveActivity
import Location

/// Watches fixes for geofence crossings and overspeed: a pure state machine whose
/// ``receive(_:)`` takes a fix and returns the alerts it raises, timed by the fix's own time.
///
/// **Geofences**, with hysteresis: a fix is *inside* a fence at a distance from the centre of at
/// most `radius`, *outside* beyond `radius + exitMargin` (margin max(10 m, 10 % of the radius)),
/// and in between it is evidence of neither. The first fix sets each fence's side without an
/// alert (inside, or else outside). A fence is crossed after `geofenceConfirmations` fixes in a
/// row on the other side; a fix in the band or on the current side resets that count.
///
/// **Overspeed**: the reported speed above `threshold` for at least `duration` seconds (from
/// the first fix above it to the current fix) raises one alert; a fix at or below the threshold,
/// or without a speed, restarts the timing. After an alert, none is raised again until a fix
/// reports less than `threshold - rearmMargin`.
public struct AlertMonitor: Sendable {
    /// One alert-worthy event.
    public enum Event: Hashable, Sendable {
        /// Entered a fence, at this fix time.
        case entered(Geofence, at: Date)
        /// Left a fence, at this fix time.
        case left(Geofence, at: Date)
        /// Above the speed limit for at least its duration: the speed in m/s at this fix time.
        case overspeed(speed: Double, limit: Overspeed, at: Date)

        /// The alert for this event on the device named `deviceName`.
        ///
        /// Titles are `Entered NAME`, `Left NAME` and `Overspeed`; bodies name the device, the
        /// time (ISO 8601, UTC) and, for overspeed, the speed and limit in km/h.
        public func alert(deviceName: String) -> AlertConfiguration {
            switch self {
            case .entered(let fence, let time):
                AlertConfiguration(
                    title: "Entered \(fence.name)", body: "\(deviceName) entered \(fence.name) at \(Self.format(time))."
                )
            case .left(let fence, let time):
                AlertConfiguration(
                    title: "Left \(fence.name)", body: "\(deviceName) left \(fence.name) at \(Self.format(time)).")
            case .overspeed(let speed, let limit, let time):
                AlertConfiguration(
                    title: "Overspeed",
                    body: "\(deviceName) at \(Self.kilometresPerHour(speed)) km/h, above "
                        + "\(Self.kilometresPerHour(limit.threshold)) km/h for \(Int(limit.duration.rounded())) s, "
                        + "at \(Self.format(time)).")
            }
        }

        private static func format(_ time: Date) -> String {
            time.formatted(.iso8601)
        }

        private static func kilometresPerHour(_ metresPerSecond: Double) -> Int {
            Int((metresPerSecond * 3.6).rounded())
        }
    }

    fileprivate enum Side: Sendable { case inside, outside }

    fileprivate struct FenceState: Sendable {
        var fence: Geofence
        var side: Side?
        var contrary = 0
    }

    private var fences: [FenceState]
    private let confirmations: Int
    private let overspeed: Overspeed?
    private var overSince: Date?
    private var armed = true

    /// Creates a monitor for the policy's geofences and overspeed limit.
    public init(policy: TrackingPolicy) {
        fences = policy.geofences.map { FenceState(fence: $0) }
        confirmations = policy.geofenceConfirmations
        overspeed = policy.overspeed
    }

    /// The fences the tracker is inside now (known after the first fix), in the policy's order.
    public var insideFences: [Geofence] {
        fences.filter { $0.side == .inside }.map(\.fence)
    }

    /// Takes one fix; returns the events it raises: fence crossings in the policy's order, then overspeed.
    public mutating func receive(_ fix: LocationFix) -> [Event] {
        let point = Coordinate(fix)
        var events: [Event] = []
        for index in fences.indices {
            if let event = fences[index].receive(point, time: fix.time, confirmations: confirmations) {
                events.append(event)
            }
        }
        if let event = checkSpeed(fix) { events.append(event) }
        return events
    }

    /// Forgets the overspeed timing, for when the fixes stop: continuity cannot be known across a gap.
    public mutating func lostFix() {
        overSince = nil
    }

    private mutating func checkSpeed(_ fix: LocationFix) -> Event? {
        guard let limit = overspeed else { return nil }
        guard let speed = fix.speed, speed.isFinite else {
            overSince = nil
            return nil
        }
        if speed < limit.threshold - limit.rearmMargin { armed = true }
        guard speed > limit.threshold else {
            overSince = nil
            return nil
        }
        let since = overSince ?? fix.time
        overSince = since
        guard armed, fix.time.timeIntervalSince(since) >= limit.duration else { return nil }
        armed = false
        return .overspeed(speed: speed, limit: limit, at: fix.time)
    }
}

extension AlertMonitor.FenceState {
    fileprivate mutating func receive(_ point: Coordinate, time: Date, confirmations: Int) -> AlertMonitor.Event? {
        let distance = point.distance(to: fence.center)
        let observed: AlertMonitor.Side? =
            distance <= fence.radius ? .inside : distance > fence.radius + fence.exitMargin ? .outside : nil
        guard let side else {
            side = observed ?? .outside
            return nil
        }
        guard let observed, observed != side else {
            contrary = 0
            return nil
        }
        contrary += 1
        guard contrary >= confirmations else { return nil }
        self.side = observed
        contrary = 0
        return observed == .inside ? .entered(fence, at: time) : .left(fence, at: time)
    }
}
