import Foundation
import Interop
import LiveActivity
import MyelineWire

/// How the board shows OwnTracks devices (phones, or trackers publishing OwnTracks JSON) beside
/// Myeline's activities: one row per `owntracks/USER/DEVICE` topic, keyed
/// `owntracks.USER.DEVICE` / `owntracks` (user and device lower-cased, other characters than a-z,
/// 0-9, `.`, `_` and `-` as `-`), stale once its last `tst` is older than ``staleAfter``, offline
/// after its `lwt` until its next location.
public struct OwnTracksInput: Hashable, Sendable {
    /// The activity id of every OwnTracks row.
    public static let activityID = "owntracks"

    /// How long after its fix (`tst`) a location turns stale, seconds.
    public var staleAfter: Double

    /// Shows OwnTracks devices, stale `staleAfter` seconds after their last fix.
    public init(staleAfter: Double) {
        self.staleAfter = staleAfter
    }

    /// The board's key for an OwnTracks topic; nil when it makes no valid device id (too long).
    public static func key(for topic: OwnTracksTopic) -> ActivityKey? {
        func level(_ text: String) -> String {
            String(
                text.lowercased().unicodeScalars.map { scalar -> Character in
                    let allowed =
                        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_"
                        || scalar == "-"
                    return allowed ? Character(scalar) : "-"
                })
        }
        guard let device = try? DeviceID("owntracks.\(level(topic.user)).\(level(topic.device))") else { return nil }
        return ActivityKey(device: device, activity: activityID)
    }

    /// What a message on an OwnTracks location topic means for the board: a location is a row (its
    /// invalid optional fields left out), an `lwt` takes the device offline, an empty message (the
    /// usual clearing of a retained location) removes the row; anything else, or a location without
    /// a valid `lat`, `lon` or `tst`, is rejected and counted.
    public func decode(_ topic: OwnTracksTopic, payload: [UInt8]) -> BoardInput {
        let name = topic.location
        guard let key = Self.key(for: topic) else {
            return .rejected(.init(topic: name, reason: "OwnTracks user and device make a board id over 64 characters"))
        }
        if payload.isEmpty { return .activityCleared(key) }
        let decoded: OwnTracksCodec.Decoded
        do {
            decoded = try OwnTracksCodec.decode(payload)
        } catch {
            return .rejected(.init(topic: name, reason: "OwnTracks: \(error.reason)"))
        }
        switch decoded.message {
        case .location(let location):
            return .ownTracksLocation(row(key: key, topic: topic, location: location))
        case .lastWill:
            return .status(StatusMessage.will(device: key.device))
        case .command, .other:
            return .rejected(.init(topic: name, reason: "OwnTracks message of a type the board does not show"))
        }
    }

    /// The row of a location; its `receivedAt` is set when the fleet applies it.
    func row(key: ActivityKey, topic: OwnTracksTopic, location: OwnTracksLocation) -> ActivityRow {
        let state = LocationActivityAttributes.ContentState(
            latitude: location.latitude, longitude: location.longitude, altitude: location.altitude.map(Double.init),
            speed: location.velocity.map { Double($0) / 3.6 }, course: location.course.map(Double.init),
            horizontalAccuracy: location.accuracy.map(Double.init), fix: .fix2D, fixTime: location.date)
        return ActivityRow(
            key: key,
            attributes: LocationActivityAttributes(
                deviceID: key.device, name: "\(topic.user)/\(topic.device)", driver: location.trackerID),
            content: state, staleDate: location.date.addingTimeInterval(staleAfter), relevance: 0, event: .update,
            seq: location.timestamp, timestamp: location.date, receivedAt: location.date)
    }
}
