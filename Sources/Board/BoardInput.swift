import Foundation
import Interop
import LiveActivity
import MyelineWire

/// One received MQTT message, turned into what it means for the board.
public enum BoardInput: Hashable, Sendable {
    /// A valid `location` activity envelope whose device and activity match its topic.
    case envelope(ActivityEnvelope<LocationActivityAttributes>)
    /// A valid envelope of another attributes type whose device and activity match its topic, with a
    /// content state of at most ``BoardDecoder/maximumContentStateSize``: shown generically.
    case genericEnvelope(AnyActivityEnvelope)
    /// An empty retained message on an activity topic: the activity was dismissed.
    case activityCleared(ActivityKey)
    /// A valid status whose device matches its topic.
    case status(StatusMessage)
    /// An empty retained message on a status topic: the device's status was removed.
    case statusCleared(DeviceID)
    /// A valid OwnTracks location (``OwnTracksInput``): its row, and its device online again.
    case ownTracksLocation(ActivityRow)
    /// Anything else published under the prefix: counted, never applied.
    case rejected(Rejection)

    /// Why a message was not applied: one line for a debug log.
    public struct Rejection: Hashable, Sendable, CustomStringConvertible {
        /// The topic it came on.
        public var topic: String
        /// What is wrong with it.
        public var reason: String

        /// Creates a rejection.
        public init(topic: String, reason: String) {
            self.topic = topic
            self.reason = reason
        }

        /// `TOPIC: REASON`.
        public var description: String { "\(topic): \(reason)" }
    }
}

/// Turns received messages into ``BoardInput``s: routes the topic, checks the size, decodes and checks
/// the payload. Pure; the cost of one message does not depend on the fleet's size.
public struct BoardDecoder: Sendable {
    /// The largest payload decoded, bytes; larger ones are rejected unread. Real envelopes are under 2 KiB.
    public static let maximumPayloadSize = 64 * 1024

    /// The topics of the fleet.
    public let topics: TopicTree

    /// How OwnTracks messages are shown; nil when the board does not show them.
    public let ownTracks: OwnTracksInput?

    /// Creates a decoder for the fleet under `topics`' prefix, and for OwnTracks devices if `ownTracks` is set.
    public init(topics: TopicTree, ownTracks: OwnTracksInput? = nil) {
        self.topics = topics
        self.ownTracks = ownTracks
    }

    /// What a message on `topic` with `payload` means for the board.
    public func decode(topic: String, payload: [UInt8]) -> BoardInput {
        if let ownTracks, let ownTracksTopic = OwnTracksTopic(parsing: topic) {
            return ownTracks.decode(ownTracksTopic, payload: payload)
        }
        guard let route = topics.route(topic) else {
            return .rejected(.init(topic: topic, reason: "not a status or activity topic under the prefix"))
        }
        if payload.count > Self.maximumPayloadSize {
            return .rejected(.init(topic: topic, reason: "payload of \(payload.count) bytes is too large"))
        }
        switch route {
        case .status(let device):
            if payload.isEmpty { return .statusCleared(device) }
            let status: StatusMessage
            do {
                status = try WireCodec.decode(StatusMessage.self, from: payload)
            } catch {
                return .rejected(.init(topic: topic, reason: error.message))
            }
            guard status.device == device else {
                return .rejected(
                    .init(topic: topic, reason: "status of device \(status.device) on another device's topic"))
            }
            return .status(status)
        case .activity(let device, let activityID):
            if payload.isEmpty { return .activityCleared(ActivityKey(device: device, activity: activityID)) }
            let envelope: ActivityEnvelope<LocationActivityAttributes>
            do {
                envelope = try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: payload)
            } catch {
                // Nearly every envelope is a location's: another type is tried only once that failed.
                return decodeGeneric(topic: topic, payload: payload, device: device, activityID: activityID)
                    ?? .rejected(.init(topic: topic, reason: error.message))
            }
            guard envelope.header.device == device, envelope.header.activity == activityID else {
                return .rejected(.init(topic: topic, reason: Self.topicMismatch))
            }
            return .envelope(envelope)
        case .track, .command, .commandResult:
            return .rejected(.init(topic: topic, reason: "not a status or activity topic"))
        }
    }

    /// The most bytes the content state of an envelope of another attributes type may take as JSON:
    /// 4 KiB, the limit ActivityKit and the `LiveActivity` library put on a content state.
    public static let maximumContentStateSize = ActivityModel<LocationActivityAttributes>.maximumContentStateSize

    private static let topicMismatch = "envelope of another device or activity than its topic"

    /// What an envelope that is not a valid `location` one means: nil when it claims to be a
    /// `location` envelope or has no valid header (the `location` decode's error says what is wrong);
    /// else the envelope of another type, or why it is rejected.
    private func decodeGeneric(topic: String, payload: [UInt8], device: DeviceID, activityID: String) -> BoardInput? {
        guard let header = try? WireCodec.decode(EnvelopeHeader.self, from: payload),
            header.attributesType != LocationActivityAttributes.typeName
        else { return nil }
        let envelope: AnyActivityEnvelope
        do {
            envelope = try WireCodec.decode(AnyActivityEnvelope.self, from: payload)
        } catch {
            return .rejected(.init(topic: topic, reason: "attributes type \(header.attributesType): \(error.message)"))
        }
        guard envelope.header.device == device, envelope.header.activity == activityID else {
            return .rejected(.init(topic: topic, reason: Self.topicMismatch))
        }
        let size = envelope.contentStateSize
        guard size <= Self.maximumContentStateSize else {
            return .rejected(
                .init(
                    topic: topic,
                    reason:
                        "attributes type \(header.attributesType): 'content-state' is \(size) bytes as JSON, over the "
                        + "\(Self.maximumContentStateSize) bytes (4 KiB) a content state may take"))
        }
        return .genericEnvelope(envelope)
    }
}
