import FoundationEssentials

/// An OwnTracks `location` message (`"_type":"location"`), as the OwnTracks booklet's JSON format
/// and owntracks/json-schema define it: what phones, OwnTracks Recorder, Home Assistant's OwnTracks
/// integration and Traccar's OwnTracks decoder read on `owntracks/USER/DEVICE`.
///
/// The booklet's units and types: degrees for `lat` and `lon` (numbers), whole seconds since the
/// Unix epoch for `tst`, and integers for `acc` and `alt` (metres), `vel` (km/h), `cog` (degrees
/// true) and `batt` (percent).
public struct OwnTracksLocation: Hashable, Sendable {
    /// Latitude in degrees (WGS 84), -90...90 (`lat`).
    public var latitude: Double
    /// Longitude in degrees (WGS 84), -180...180 (`lon`).
    public var longitude: Double
    /// When the fix was taken, whole seconds since 1970-01-01 UTC (`tst`).
    public var timestamp: Int
    /// Horizontal accuracy in whole metres (`acc`), if known.
    public var accuracy: Int?
    /// Altitude above mean sea level in whole metres (`alt`), if known.
    public var altitude: Int?
    /// Speed over ground in whole km/h (`vel`), if known.
    public var velocity: Int?
    /// Course over ground in whole degrees true, 0...359 (`cog`), if known.
    public var course: Int?
    /// The tracker id, the initials a map shows (`tid`), if any.
    public var trackerID: String?
    /// What triggered the report, one character (`t`); see ``Trigger``. None means automatic.
    public var trigger: String?
    /// Battery level in percent, 0...100 (`batt`), if the device knows it.
    public var battery: Int?

    /// Creates a location message from its wire values.
    public init(
        latitude: Double, longitude: Double, timestamp: Int, accuracy: Int? = nil, altitude: Int? = nil,
        velocity: Int? = nil, course: Int? = nil, trackerID: String? = nil, trigger: String? = nil,
        battery: Int? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.timestamp = timestamp
        self.accuracy = accuracy
        self.altitude = altitude
        self.velocity = velocity
        self.course = course
        self.trackerID = trackerID
        self.trigger = trigger
        self.battery = battery
    }

    /// The message for a fix in Myeline's units, rounded to the booklet's integers.
    ///
    /// As the OwnTracks apps do, `acc`, `alt`, `vel` and `cog` are left out when they round to zero
    /// (the booklet: "only added if they are not zero"), and so are values that are unknown, negative
    /// where they cannot be, or not finite.
    /// - Parameters:
    ///   - time: when the fix was taken; `tst` is its whole second (rounded down).
    ///   - speed: metres per second; `vel` is km/h.
    ///   - course: degrees true; 359.6 rounds to 0, not 360.
    ///   - horizontalAccuracy: metres; `acc` is rounded up, so it never claims more accuracy.
    public init(
        time: Date, latitude: Double, longitude: Double, altitude: Double?, speed: Double?, course: Double?,
        horizontalAccuracy: Double?, trackerID: String?, trigger: String?, battery: Int? = nil
    ) {
        func whole(_ value: Double?, _ rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int? {
            guard let value, value.isFinite, abs(value) < 1e9 else { return nil }
            let rounded = Int(value.rounded(rule))
            return rounded == 0 ? nil : rounded
        }
        self.init(
            latitude: latitude, longitude: longitude, timestamp: Int(time.timeIntervalSince1970.rounded(.down)),
            accuracy: whole(horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil }, .up),
            altitude: whole(altitude),
            velocity: whole(speed.flatMap { $0 >= 0 ? $0 * 3.6 : nil }),
            course: whole(course.flatMap { (0...360).contains($0) ? $0 : nil }).map { $0 % 360 }.flatMap {
                $0 == 0 ? nil : $0
            },
            trackerID: trackerID, trigger: trigger, battery: battery.flatMap { (0...100).contains($0) ? $0 : nil })
    }

    /// The values of `t` that Myeline writes.
    public enum Trigger {
        /// An automatic report: a fix the tracker accepted (the booklet's "timer based publish").
        public static let timer = "t"
        /// The answer to a `reportLocation` command.
        public static let reportLocation = "r"
    }

    /// The fix time as a date.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(timestamp)) }

    /// The tracker id of a device that has none configured: the last two letters or digits of its
    /// OwnTracks device level (`van-7` gives `n7`, `truck.12` gives `12`), or its last two
    /// characters when it has no letter or digit. Maps show it on the tracker's marker.
    public static func defaultTrackerID(device: String) -> String {
        let alphanumerics = device.filter { $0.isLetter || $0.isNumber }
        return String((alphanumerics.isEmpty ? device : alphanumerics).suffix(2))
    }
}
