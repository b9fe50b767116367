import FoundationEssentials
import LiveActivity

/// The retained message on `PREFIX/DEVICE/activities/ACTIVITY` (QoS 1): one start, update or end
/// of an activity, with the keys of Apple's Live Activity push payload (`event`, `timestamp`,
/// `content-state`, `stale-date`, `dismissal-date`, `relevance-score`, `alert`) and Myeline's
/// (`schema`, `device`, `activity`, `attributes-type`, `attributes`, `seq`).
///
/// A dismissed activity has no envelope: its topic gets an empty retained message, which clears it.
public struct ActivityEnvelope<Attributes: ActivityAttributes>: WirePayload, Codable, Hashable, Sendable {
    /// The schema of activity envelopes, `myeline.activity.v1`.
    public static var schema: String { EnvelopeHeader.schema }

    /// The routing keys: device, activity, attributes type, event and seq.
    public let header: EnvelopeHeader
    /// When the change happened (`timestamp`).
    public let timestamp: Date
    /// The activity's attributes (`attributes`), sent in full with every envelope.
    public let attributes: Attributes
    /// The content: `content-state`, `stale-date` (absent when nil) and `relevance-score`.
    public let content: ActivityContent<Attributes.ContentState>
    /// When the ended activity will be dismissed (`dismissal-date`); set exactly when the event is `end`.
    public let dismissalDate: Date?
    /// The alert to show with this change (`alert`), if any.
    public let alert: AlertConfiguration?
}

extension ActivityEnvelope {
    /// The envelope that publishes an activity event from `device`; nil for the `.dismissed`
    /// event, which is published as an empty retained message instead.
    public init?(event: ActivityEvent<Attributes>, device: DeviceID) {
        let wireEvent: EnvelopeEvent
        switch event.kind {
        case .start(let content):
            (wireEvent, self.content, dismissalDate, alert) = (.start, content, nil, nil)
        case .update(let content, let alert):
            (wireEvent, self.content, dismissalDate, self.alert) = (.update, content, nil, alert)
        case .end(let content, let dismissalDate):
            (wireEvent, self.content, self.dismissalDate, alert) = (.end, content, dismissalDate, nil)
        case .dismissed:
            return nil
        }
        header = EnvelopeHeader(
            device: device, activity: event.activityID, attributesType: Attributes.typeName, event: wireEvent,
            seq: event.seq)
        timestamp = event.timestamp
        attributes = event.attributes
    }
}

extension ActivityEnvelope {
    /// The envelope that ends this activity at `date` with its current content, dismissed at
    /// once: what an agent publishes for an activity of its own it no longer knows (an orphan),
    /// before clearing its retained message. Its seq follows this envelope's.
    public func ended(at date: Date) -> ActivityEnvelope {
        ActivityEnvelope(
            header: EnvelopeHeader(
                device: header.device, activity: header.activity, attributesType: header.attributesType, event: .end,
                seq: header.seq + 1),
            timestamp: date, attributes: attributes, content: content, dismissalDate: date, alert: nil)
    }
}
