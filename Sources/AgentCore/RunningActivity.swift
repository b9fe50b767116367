import FoundationEssentials
import LiveActivity
import MyelineWire
import Location
import Tracking

/// One of the agent's activities while this process runs it: the activity's lifecycle, its
/// tracker, its track seq, and what waits to be saved and published.
public struct RunningActivity: Sendable {
    /// The activity: lifecycle, content and event numbering.
    public internal(set) var model: ActivityModel<LocationActivityAttributes>
    /// What to publish when.
    public internal(set) var tracker: Tracker
    /// The seq of the latest track point.
    public internal(set) var trackSeq: Int
    /// Where its track points go (`PREFIX/DEVICE/activities/ID/track`): made once, not for every
    /// point (issue 24).
    let trackTopic: String
    /// When the ended activity's envelope is cleared; nil while it runs.
    public internal(set) var dismissalDate: Date?
    /// The content to publish at the end of the batch, with the batch's alert, if any.
    var pending: Pending?
    /// Whether the activity's latest event (its start, or the first update of a resumption) is
    /// still to be published.
    var announce = true
    /// Whether something changed that is not saved yet.
    var unsaved = true
    /// Whether that change is a milestone (``AgentCore/Action/persist(points:activities:milestones:)``);
    /// the first save of a trip is one.
    var milestone = true

    /// An update waiting for the end of the batch.
    struct Pending: Hashable, Sendable {
        var content: ActivityContent<LocationActivityAttributes.ContentState>
        var alert: AlertConfiguration?
    }

    /// The activity's id.
    public var id: String { model.id }
    /// Whether the activity still runs (not ended).
    public var isRunning: Bool { dismissalDate == nil }

    /// Takes in what the tracker decided: the content to publish at the end of the batch, and the
    /// track point (returned, with its seq) for the outbox.
    mutating func take(_ output: Tracker.Output) -> LocationFix? {
        if let content = output.content {
            pending = Pending(content: content, alert: output.alert ?? pending?.alert)
            unsaved = true
        }
        guard let fix = output.trackFix else { return nil }
        trackSeq += 1
        unsaved = true
        return fix
    }
}

extension TrackPoint {
    /// The track point of an accepted fix; values out of the wire's ranges are left out.
    public init(fix: LocationFix, device: DeviceID, activity: String, seq: Int) {
        self.init(
            device: device, activity: activity, seq: seq, time: fix.time, latitude: fix.latitude,
            longitude: fix.longitude, altitude: fix.altitude, speed: fix.speed.flatMap { $0 >= 0 ? $0 : nil },
            course: fix.course.flatMap { (0...360).contains($0) ? $0 : nil },
            horizontalAccuracy: fix.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil }, fix: FixMode(fix.mode),
            satellites: fix.satellitesUsed.flatMap { $0 >= 0 ? $0 : nil })
    }
}
