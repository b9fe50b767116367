import FoundationEssentials
import LiveActivity

/// An activity envelope of any attributes type, read without a Swift type for it: its `attributes`
/// and `content-state` kept as JSON objects. What a receiver that shows every type decodes
/// (docs/topics.md, attributes types: a type it does not know is valid and shown generically).
///
/// It checks what docs/schema/activity-envelope.json checks: every envelope rule of
/// ``ActivityEnvelope`` (schema, ids, event, seq, dates, `dismissal-date` exactly with `end`, the
/// alert), that `attributes` and `content-state` are objects, and, for a registered type
/// (`location`), its attributes and content state by their rules. Decode it with
/// ``WireCodec/decode(_:from:)-(_,[UInt8])``.
public struct AnyActivityEnvelope: WirePayload, Decodable, Hashable, Sendable {
    /// The schema of activity envelopes, `myeline.activity.v1`.
    public static var schema: String { EnvelopeHeader.schema }

    /// The routing keys: device, activity, attributes type, event and seq.
    public let header: EnvelopeHeader
    /// When the change happened (`timestamp`).
    public let timestamp: Date
    /// The activity's attributes (`attributes`), by key.
    public let attributes: [String: WireValue]
    /// The content: `content-state` by key, `stale-date` (absent when nil) and `relevance-score`.
    public let content: ActivityContent<[String: WireValue]>
    /// When the ended activity will be dismissed (`dismissal-date`); set exactly when the event is `end`.
    public let dismissalDate: Date?
    /// The alert to show with this change (`alert`), if any.
    public let alert: AlertConfiguration?

    /// Decodes and checks an envelope of any attributes type.
    ///
    /// - Throws: `DecodingError` naming the key: the header's problems, `attributes` or
    ///   `content-state` that are not objects, a registered type's invalid attributes or content
    ///   state, a missing `dismissal-date` for `end` or one for another event, a value nested deeper
    ///   than ``WireValue/maximumDepth``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKey.self)
        header = try EnvelopeHeader(container: container)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
        attributes = try Self.object(container, .attributes)
        content = ActivityContent(
            state: try Self.object(container, .contentState),
            staleDate: try container.decodeIfPresent(Date.self, forKey: .staleDate),
            relevanceScore: try container.decode(Double.self, forKey: .relevanceScore))
        dismissalDate = try container.dismissalDate(of: header.event)
        alert = try container.decodeIfPresent(AlertConfiguration.self, forKey: .alert)
        if header.attributesType == LocationActivityAttributes.typeName {
            // A registered type is held to its rules, as ActivityEnvelope<LocationActivityAttributes> holds it.
            _ = try container.decode(LocationActivityAttributes.self, forKey: .attributes)
            _ = try container.decode(LocationActivityAttributes.ContentState.self, forKey: .contentState)
        }
    }

    /// How many bytes `content-state` takes as the wire writes it (keys sorted, no spaces): the
    /// measure of ``ActivityModel/maximumContentStateSize``, ActivityKit's 4 KiB.
    public var contentStateSize: Int {
        ContentJSON.size(of: content.state) ?? Int.max
    }

    /// The object at `key`.
    private static func object(
        _ container: KeyedDecodingContainer<EnvelopeKey>, _ key: EnvelopeKey
    ) throws -> [String: WireValue] {
        let value = try container.decode(WireValue.self, forKey: key)
        guard case .object(let members) = value else {
            throw container.invalid(key, "must be an object, not \(value.kindName)")
        }
        return members
    }
}

extension KeyedDecodingContainer where Key == EnvelopeKey {
    /// The envelope's `dismissal-date`, present exactly when `event` is `end`.
    ///
    /// - Throws: `DecodingError` naming the key: missing for `end`, present for another event.
    func dismissalDate(of event: EnvelopeEvent) throws -> Date? {
        let date = try decodeIfPresent(Date.self, forKey: .dismissalDate)
        switch (event, date) {
        case (.end, nil):
            throw missing(.dismissalDate)
        case (.start, _?), (.update, _?):
            throw invalid(.dismissalDate, "only allowed when 'event' is \"end\"")
        default:
            return date
        }
    }
}
