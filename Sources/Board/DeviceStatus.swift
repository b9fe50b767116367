import Foundation
import LiveActivity
import MyelineWire

/// A device as the board knows it: its link state, since when, when it was last heard of, and the
/// health its agent reports on the status topic (docs/topics.md#status).
///
/// Every device seen on its status topic or with an activity has one; a device whose status was
/// cleared keeps its record while it has activities, with an unknown link.
public struct DeviceStatus: Hashable, Sendable {
    /// Online or offline; nil when no status was seen (or it was cleared).
    public var state: StatusMessage.State?
    /// Since when the state holds: the status's `since`, or when the board received it (a will has none).
    public var since: Date?
    /// Why the device is offline, when it said.
    public var reason: String?
    /// The agent's version (`version`).
    public var version: String?
    /// The agent process (`instance`).
    public var instance: String?
    /// Track points the agent dropped because its outbox was full (`dropped`), since its state
    /// directory was created; nil when not reported.
    public var dropped: UInt64?
    /// Why the agent cannot save to its state directory (`storage-error`); nil when it can.
    public var storageError: String?
    /// The agent's clock minus its receiver's time, seconds (`clock-offset`); nil when they agree.
    public var clockOffset: Int?
    /// How many times the agent started after a power cut (`power-losses`), since its state
    /// directory was created; nil when none or not reported. Shown, not a health issue: a tracker on
    /// a vehicle's switched supply loses power at every stop.
    public var powerLosses: UInt64?
    /// The latest time the device reported (an envelope's `timestamp` or fix time, a status's
    /// `since`), never later than the board's clock when it arrived; nil before any.
    public var lastSeen: Date?
    /// How far the device's latest envelope (its `timestamp` or fix time) was ahead of the board's
    /// clock when it arrived, seconds; 0 when it was not ahead.
    public var ahead: Double = 0

    /// `1 power loss`, `3 power losses`, or nil when none was reported: for the card and the plain line.
    public var powerLossText: String? {
        guard let count = powerLosses, count > 0 else { return nil }
        return "\(RowFormat.count(Int(clamping: count))) power loss\(count == 1 ? "" : "es")"
    }

    /// A device the board knows nothing of yet.
    public init() {}

    /// Notes a time the device reported, received at `now`: the latest one, never in the future.
    mutating func noteSeen(_ date: Date, now: Date) {
        let seen = min(date, now)
        if lastSeen.map({ seen > $0 }) ?? true { lastSeen = seen }
    }

    /// Notes an envelope's latest time (its `timestamp` or fix time) received at `now`, and how far
    /// ahead of `now` it was.
    mutating func noteEnvelope(at date: Date, now: Date) {
        noteSeen(date, now: now)
        ahead = max(0, date.timeIntervalSince(now))
    }
}

/// What is wrong with a device, from its status and what the board sees of its messages.
public struct DeviceHealth: Hashable, Sendable {
    /// A clock further than this from its receiver's (`clock-offset`) or ahead of the board's clock is
    /// a problem, seconds: the agent reports offsets beyond 30 s.
    public static let clockTolerance: Double = 30

    /// One problem.
    public enum Issue: Hashable, Sendable {
        /// The device's clock is off by this many seconds (positive: ahead), by its `clock-offset`, or
        /// by how far its timestamps are ahead of the board's clock.
        case clock(seconds: Double)
        /// The agent cannot save to its state directory (`storage-error`).
        case storage(String)
        /// The agent dropped this many track points (`dropped`).
        case dropped(UInt64)
        /// Two agents publish this device's status in turn (``Fleet/duplicatedDevices``).
        case duplicate
        /// One of its rows was resynchronised past the `seq` rule (``ActivityRow/resyncedAt``).
        case resynced

        /// The key in the JSON lines' `issues`.
        public var name: String {
            switch self {
            case .clock: "clock"
            case .storage: "storage"
            case .dropped: "dropped"
            case .duplicate: "duplicate"
            case .resynced: "resynced"
            }
        }

        /// A few words for the board, such as `clock -1h57m` or `12 dropped`.
        public var text: String {
            switch self {
            case .clock(let seconds): "clock \(seconds < 0 ? "-" : "+")\(RowFormat.span(abs(seconds)))"
            case .storage: "storage error"
            case .dropped(let count): "\(RowFormat.count(Int(clamping: count))) dropped"
            case .duplicate: "duplicate id"
            case .resynced: "resynced"
            }
        }
    }

    /// The problems, in the order above; empty when healthy.
    public var issues: [Issue]

    /// Whether nothing is wrong.
    public var isHealthy: Bool { issues.isEmpty }

    /// `clock -1h57m, storage error`, or empty when healthy.
    public var summary: String { issues.map(\.text).joined(separator: ", ") }

    /// The health of a device with `status`, flagged `duplicate` and `resynced` as the fleet says.
    public init(_ status: DeviceStatus, duplicate: Bool = false, resynced: Bool = false) {
        var issues: [Issue] = []
        if let offset = status.clockOffset, Double(offset.magnitude) > Self.clockTolerance {
            issues.append(.clock(seconds: Double(offset)))
        } else if status.ahead > Self.clockTolerance {
            issues.append(.clock(seconds: status.ahead))
        }
        if let error = status.storageError { issues.append(.storage(error)) }
        if let dropped = status.dropped, dropped > 0 { issues.append(.dropped(dropped)) }
        if duplicate { issues.append(.duplicate) }
        if resynced { issues.append(.resynced) }
        self.issues = issues
    }
}
