import Foundation
import LiveActivity

/// Identifies one activity on the board: its device and its activity id.
public struct ActivityKey: Hashable, Sendable, Comparable {
    /// The device running the activity.
    public var device: DeviceID
    /// The activity id.
    public var activity: String

    /// Creates a key.
    public init(device: DeviceID, activity: String) {
        self.device = device
        self.activity = activity
    }

    /// Device id first, then activity id.
    public static func < (lhs: ActivityKey, rhs: ActivityKey) -> Bool {
        (lhs.device.rawValue, lhs.activity) < (rhs.device.rawValue, rhs.activity)
    }
}

/// The state a row shows, computed from the latest envelope, the device's status and the local clock.
public enum RowState: String, CaseIterable, Hashable, Sendable {
    /// Running, with fresh content.
    case active = "ACTIVE"
    /// The content is past its `stale-date` by the board's clock.
    case stale = "STALE"
    /// The trip is paused.
    case paused = "PAUSED"
    /// The activity ended; the row stays until its `dismissal-date`.
    case ended = "ENDED"
    /// The device's status says it is offline.
    case offline = "OFFLINE"
    /// A device with no activity on the board (its own row), not offline.
    case idle = "IDLE"
}

/// One activity as the board knows it: the latest envelope applied.
public struct ActivityRow: Hashable, Sendable {
    /// The activity's device and id.
    public let key: ActivityKey
    /// The fixed attributes (name, vehicle, driver, destination).
    public var attributes: LocationActivityAttributes
    /// The latest content state.
    public var content: LocationActivityAttributes.ContentState
    /// When the content turns stale; `nil` means never.
    public var staleDate: Date?
    /// The relevance score: higher sorts first.
    public var relevance: Double
    /// The latest event: start, update or end.
    public var event: EnvelopeEvent
    /// The highest `seq` applied.
    public var seq: Int
    /// When the latest change happened, by the device's clock.
    public var timestamp: Date
    /// When an ended activity goes away; set only after an `end`.
    public var dismissalDate: Date?
    /// The last alert any envelope of this activity carried.
    public var lastAlert: AlertConfiguration?
    /// When that alert was raised: its envelope's `timestamp` (the device's clock), never later than
    /// the board's clock when it arrived.
    public var alertDate: Date?
    /// When the board last took an envelope that the `seq` rule would have dropped, because newer
    /// ones (by `timestamp`) kept coming for longer than ``Fleet/resyncWindow``; nil when never.
    public var resyncedAt: Date?
    /// When the board received the latest envelope, by its own clock.
    public var receivedAt: Date

    /// The row for a decoded envelope received at `receivedAt`.
    public init(_ envelope: ActivityEnvelope<LocationActivityAttributes>, receivedAt: Date) {
        key = ActivityKey(device: envelope.header.device, activity: envelope.header.activity)
        attributes = envelope.attributes
        content = envelope.content.state
        staleDate = envelope.content.staleDate
        relevance = envelope.content.relevanceScore
        event = envelope.header.event
        seq = envelope.header.seq
        timestamp = envelope.timestamp
        dismissalDate = envelope.dismissalDate
        lastAlert = envelope.alert
        alertDate = envelope.alert.map { _ in min(envelope.timestamp, receivedAt) }
        self.receivedAt = receivedAt
    }

    /// A row from its parts: an OwnTracks device's (``OwnTracksInput``).
    init(
        key: ActivityKey, attributes: LocationActivityAttributes, content: LocationActivityAttributes.ContentState,
        staleDate: Date?, relevance: Double, event: EnvelopeEvent, seq: Int, timestamp: Date, receivedAt: Date
    ) {
        self.key = key
        self.attributes = attributes
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.event = event
        self.seq = seq
        self.timestamp = timestamp
        self.receivedAt = receivedAt
    }

    /// This row's state at `now`, given whether its device is offline.
    ///
    /// An ended activity shows ENDED; otherwise an offline device shows OFFLINE, then content past its
    /// stale date shows STALE, then a paused trip PAUSED; anything else is ACTIVE.
    public func state(at now: Date, deviceOffline: Bool) -> RowState {
        if event == .end { return .ended }
        if deviceOffline { return .offline }
        if let staleDate, now >= staleDate { return .stale }
        if content.paused { return .paused }
        return .active
    }
}
