import Foundation
import LiveActivity
import MyelineWire

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
    /// What the activity holds: a `location` activity's attributes and content state, or another
    /// attributes type's, shown generically.
    public var details: Details
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
        self.init(
            header: envelope.header, timestamp: envelope.timestamp,
            details: .location(attributes: envelope.attributes, content: envelope.content.state),
            staleDate: envelope.content.staleDate, relevance: envelope.content.relevanceScore,
            dismissalDate: envelope.dismissalDate, alert: envelope.alert, receivedAt: receivedAt)
    }

    /// The row for an envelope of an attributes type the board has no columns for, received at `receivedAt`.
    public init(_ envelope: AnyActivityEnvelope, receivedAt: Date) {
        self.init(
            header: envelope.header, timestamp: envelope.timestamp, details: .generic(GenericActivity(envelope)),
            staleDate: envelope.content.staleDate, relevance: envelope.content.relevanceScore,
            dismissalDate: envelope.dismissalDate, alert: envelope.alert, receivedAt: receivedAt)
    }

    /// The row for an envelope's parts, of whatever type.
    private init(
        header: EnvelopeHeader, timestamp: Date, details: Details, staleDate: Date?, relevance: Double,
        dismissalDate: Date?, alert: AlertConfiguration?, receivedAt: Date
    ) {
        key = ActivityKey(device: header.device, activity: header.activity)
        self.details = details
        self.staleDate = staleDate
        self.relevance = relevance
        event = header.event
        seq = header.seq
        self.timestamp = timestamp
        self.dismissalDate = dismissalDate
        lastAlert = alert
        alertDate = alert.map { _ in min(timestamp, receivedAt) }
        self.receivedAt = receivedAt
    }

    /// A row from its parts: an OwnTracks device's (``OwnTracksInput``).
    init(
        key: ActivityKey, attributes: LocationActivityAttributes, content: LocationActivityAttributes.ContentState,
        staleDate: Date?, relevance: Double, event: EnvelopeEvent, seq: Int, timestamp: Date, receivedAt: Date
    ) {
        self.key = key
        details = .location(attributes: attributes, content: content)
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
    /// stale date shows STALE, then a paused trip PAUSED (a `location` activity's); anything else is ACTIVE.
    public func state(at now: Date, deviceOffline: Bool) -> RowState {
        if event == .end { return .ended }
        if deviceOffline { return .offline }
        if let staleDate, now >= staleDate { return .stale }
        if case .location(_, let content) = details, content.paused { return .paused }
        return .active
    }

    /// What an activity on the board holds, by its attributes type.
    public enum Details: Hashable, Sendable {
        /// A `location` activity: the fixed attributes (name, vehicle, driver, destination) and the
        /// latest content state, each with columns of its own.
        case location(attributes: LocationActivityAttributes, content: LocationActivityAttributes.ContentState)
        /// An activity of another attributes type (docs/topics.md, attributes types).
        case generic(GenericActivity)
    }

    /// The attributes of a `location` activity; nil for another type.
    public var attributes: LocationActivityAttributes? {
        guard case .location(let attributes, _) = details else { return nil }
        return attributes
    }

    /// The latest content state of a `location` activity; nil for another type.
    public var content: LocationActivityAttributes.ContentState? {
        guard case .location(_, let content) = details else { return nil }
        return content
    }

    /// Where a `location` activity goes now: the destination a push update set (the content
    /// state's), else the one it started with (the attributes'); nil without either, and for
    /// another type. Its `progress` and `eta` count toward this one. Every view shows this.
    public var destination: LocationActivityAttributes.Destination? {
        guard case .location(let attributes, let content) = details else { return nil }
        return content.destination ?? attributes.destination
    }

    /// The status text a `start` or `update` command set on a `location` activity, such as `Out
    /// for delivery`, as the device sent it; nil when none was set, and for another type. The
    /// terminal's views show it unless it is blank (``RowFormat/status(_:)``); the JSON lines give it as
    /// it is (`status-text`).
    public var statusText: String? {
        guard case .location(_, let content) = details else { return nil }
        return content.status
    }

    /// The activity of another attributes type; nil for a `location` one.
    public var generic: GenericActivity? {
        guard case .generic(let generic) = details else { return nil }
        return generic
    }

    /// Whether the activity is of another type than `location`.
    var isGeneric: Bool {
        if case .generic = details { return true }
        return false
    }

    /// The attributes type (`attributes-type`), such as `location`.
    public var attributesType: String {
        switch details {
        case .location: LocationActivityAttributes.typeName
        case .generic(let generic): generic.type
        }
    }

    /// The name shown: the attributes' name, or the activity id for a type whose attributes have no
    /// `name` string.
    public var name: String {
        switch details {
        case .location(let attributes, _): attributes.name
        case .generic(let generic): generic.name ?? key.activity
        }
    }

    /// When the latest envelope's data is from by the device's clock: a location's fix time when it
    /// is later than the envelope's `timestamp`, else the `timestamp`.
    var latestTime: Date {
        guard case .location(_, let content) = details, let fixTime = content.fixTime else { return timestamp }
        return max(timestamp, fixTime)
    }
}
