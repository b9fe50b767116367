import FoundationEssentials
import LiveActivity

/// One message on `PREFIX/DEVICE/activities/ACTIVITY/track` (QoS 2, not retained): a position of
/// the activity's trip, for receivers that draw the path. Absent optionals are omitted.
public struct TrackPoint: WirePayload, Codable, Hashable, Sendable {
    /// The schema of track points, `myeline.track.v1`.
    public static let schema = "myeline.track.v1"

    /// The device (`device`).
    public var device: DeviceID
    /// The activity whose trip this point belongs to (`activity`).
    public var activity: String
    /// The point's position in the activity's track (`seq`): 1 for the first, +1 per point; its
    /// own count, independent of the envelopes' `seq`.
    public var seq: Int
    /// When the fix was taken (`time`), UTC.
    public var time: Date
    /// Latitude in degrees (WGS 84), -90...90 (`latitude`).
    public var latitude: Double
    /// Longitude in degrees (WGS 84), -180...180 (`longitude`).
    public var longitude: Double
    /// Altitude above mean sea level in metres (`altitude`), if known.
    public var altitude: Double?
    /// Speed over ground in metres per second, at least 0 (`speed`), if known.
    public var speed: Double?
    /// Course over ground in degrees true, 0...360 (`course`), if known.
    public var course: Double?
    /// Horizontal accuracy (error radius) in metres, at least 0 (`horizontalAccuracy`), if known.
    public var horizontalAccuracy: Double?
    /// The kind of fix (`fix`), if known.
    public var fix: FixMode?
    /// How many satellites were used, at least 0 (`satellites`), if known.
    public var satellites: Int?

    /// Creates a track point; values are checked when it is encoded.
    public init(
        device: DeviceID, activity: String, seq: Int, time: Date, latitude: Double, longitude: Double,
        altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, horizontalAccuracy: Double? = nil,
        fix: FixMode? = nil, satellites: Int? = nil
    ) {
        self.device = device
        self.activity = activity
        self.seq = seq
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.horizontalAccuracy = horizontalAccuracy
        self.fix = fix
        self.satellites = satellites
    }

    /// The track point of a location content state; nil when it has no position or no fix time.
    public init?(device: DeviceID, activity: String, seq: Int, state: LocationActivityAttributes.ContentState) {
        guard let latitude = state.latitude, let longitude = state.longitude, let time = state.fixTime else {
            return nil
        }
        self.init(
            device: device, activity: activity, seq: seq, time: time, latitude: latitude, longitude: longitude,
            altitude: state.altitude, speed: state.speed, course: state.course,
            horizontalAccuracy: state.horizontalAccuracy, fix: state.fix, satellites: state.satellites)
    }
}
