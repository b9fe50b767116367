import AgentStore
import Foundation
import LiveActivity
import Location
import Tracking

/// One of the agent's activities while this process runs it: the activity, its tracker, its
/// saved state, its sequences and what waits to be saved and published. Used from the control
/// loop only.
struct Trip {
    let activity: Activity<LocationActivityAttributes>
    var tracker: Tracker
    let store: ActivityStateStore<LocationActivityAttributes>
    let publisher: EnvelopePublisher
    /// Publishes the activity's events; its value tells whether the dismissal reached the broker.
    let publisherTask: Task<Bool, Never>
    /// The seq of the activity's latest event, published or about to be.
    var lastSeq: Int
    /// The seq of the latest track point.
    var trackSeq: Int
    /// When the ended activity's envelope is cleared; nil while it runs.
    var dismissalDate: Date?
    /// The content to publish at the end of the batch, with the alert of the batch, if any.
    var pending: (content: ActivityContent<LocationActivityAttributes.ContentState>, alert: AlertConfiguration?)?
    /// Whether something changed that is not saved yet.
    var unsaved = false

    var id: String { activity.id }
    /// Whether the activity still runs (not ended).
    var isRunning: Bool { dismissalDate == nil }

    /// Takes in what the tracker decided: the track point (returned, encoded, for the outbox) and
    /// the content to publish at the end of the batch.
    mutating func take(_ output: Tracker.Output, topic: String) throws -> (topic: String, payload: [UInt8])? {
        if let content = output.content {
            pending = (content, output.alert ?? pending?.alert)
            unsaved = true
        }
        guard let fix = output.trackFix else { return nil }
        trackSeq += 1
        unsaved = true
        let point = TrackPoint(fix: fix, device: activity.attributes.deviceID, activity: id, seq: trackSeq)
        return (topic, Array(try WireCodec.encode(point)))
    }

    /// The record to save now: with the pending update counted, so a seq saved is never reused.
    func record(now: Date) throws -> PersistedActivity<LocationActivityAttributes> {
        PersistedActivity(
            activityID: id, attributesType: LocationActivityAttributes.typeName,
            lastSeq: lastSeq + (pending == nil ? 0 : 1), trackSeq: trackSeq, attributes: activity.attributes,
            tripTotals: try JSONEncoder().encode(tracker.snapshot(now: now)), startedAt: tracker.startedAt,
            dismissalDate: dismissalDate)
    }

    /// Publishes the pending content, once saved.
    mutating func publishPending() throws {
        guard let pending else { return }
        self.pending = nil
        try activity.update(pending.content, alertConfiguration: pending.alert)
        lastSeq += 1
    }
}

extension TrackPoint {
    /// The track point of an accepted fix; values out of the wire's ranges are left out.
    init(fix: LocationFix, device: DeviceID, activity: String, seq: Int) {
        self.init(
            device: device, activity: activity, seq: seq, time: fix.time, latitude: fix.latitude,
            longitude: fix.longitude, altitude: fix.altitude, speed: fix.speed.flatMap { $0 >= 0 ? $0 : nil },
            course: fix.course.flatMap { (0...360).contains($0) ? $0 : nil },
            horizontalAccuracy: fix.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil }, fix: FixMode(fix.mode),
            satellites: fix.satellitesUsed.flatMap { $0 >= 0 ? $0 : nil })
    }
}
