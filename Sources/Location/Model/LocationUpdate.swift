import FoundationEssentials

/// One update from a location source: the receiver's state at one epoch, with or without a fix.
///
/// The Linux counterpart of Core Location's `CLLocationUpdate`: sources yield an endless (live) or
/// finite (file) sequence of these. `fix == nil` means "no location": the receiver has no fix, the
/// device went away, or the source is unreachable; ``status`` says which.
public struct LocationUpdate: Hashable, Sendable {
    /// Why an update has or lacks a fix.
    public enum Status: String, Hashable, Sendable, CaseIterable {
        /// The receiver has a fix; ``LocationUpdate/fix`` is set.
        case fix
        /// The receiver reports, but has no fix (gpsd mode 0 or 1, NMEA status V or quality 0).
        case noFix
        /// gpsd reports that the device went away (unplugged, or removed from gpsd).
        case deviceUnavailable
        /// The source cannot be reached: gpsd is down, restarting or silent.
        case sourceUnavailable
    }

    /// The fix, or `nil` when there is none (see ``status``).
    public var fix: LocationFix?
    /// Why ``fix`` is set or not; `.fix` exactly when ``fix`` is not `nil`.
    public var status: Status
    /// The receiver's time of this epoch (UTC) when known, with or without a fix.
    public var time: Date?
    /// The device that produced the update (a gpsd device path such as `/dev/ttyACM0`), if known.
    public var device: String?

    /// An update with a fix.
    public init(fix: LocationFix, device: String? = nil) {
        self.fix = fix
        self.status = .fix
        self.time = fix.time
        self.device = device
    }

    /// An update without a fix; `status` must not be `.fix` (it becomes `.noFix` if it is).
    public init(noFix status: Status = .noFix, time: Date? = nil, device: String? = nil) {
        self.fix = nil
        self.status = status == .fix ? .noFix : status
        self.time = time
        self.device = device
    }

    /// The fix mode: `.none` when there is no fix.
    public var mode: LocationFixMode { fix?.mode ?? .none }
}

/// The dimension of a satellite fix. Named so as not to clash with LiveActivity's `FixMode`.
public enum LocationFixMode: String, Hashable, Sendable, CaseIterable, Comparable {
    /// No fix (gpsd mode 0 or 1, NMEA GSA fix type 1).
    case none
    /// A horizontal fix without a usable altitude.
    case twoDimensional = "2d"
    /// A fix with altitude.
    case threeDimensional = "3d"

    private var rank: Int {
        switch self {
        case .none: 0
        case .twoDimensional: 1
        case .threeDimensional: 2
        }
    }

    public static func < (lhs: LocationFixMode, rhs: LocationFixMode) -> Bool { lhs.rank < rhs.rank }
}

/// A position fix: where the receiver was at one instant, with what it knows of its motion and accuracy.
///
/// Coordinates are WGS 84. Optional values are `nil` when the source did not report them; they are
/// never NaN or infinite.
public struct LocationFix: Hashable, Sendable {
    /// The time of the fix (UTC), as the receiver reported it (after any week-rollover correction).
    public var time: Date
    /// Latitude in degrees, -90 (south) to 90 (north).
    public var latitude: Double
    /// Longitude in degrees, -180 (west) to 180 (east).
    public var longitude: Double
    /// Altitude above mean sea level in metres, `nil` if unknown.
    public var altitude: Double?
    /// Speed over ground in metres per second, `nil` if unknown.
    public var speed: Double?
    /// Course over ground in degrees true (0 ..< 360, clockwise from true north), `nil` if unknown.
    public var course: Double?
    /// Estimated horizontal error in metres (gpsd `eph`, NMEA GST, GPX none), `nil` if unknown.
    public var horizontalAccuracy: Double?
    /// Whether the fix is 2D or 3D (never `.none` for a fix).
    public var mode: LocationFixMode
    /// Satellites used in the solution, `nil` if unknown.
    public var satellitesUsed: Int?
    /// The source's own quality fields (DOPs, gpsd error estimates, NMEA fix quality).
    public var quality: LocationQuality
    /// Which of ``speed`` and ``course`` the source computed from positions (``MotionEstimator``)
    /// because the receiver did not report them; empty when both are the receiver's own or absent.
    public var derived: DerivedMotion = []

    /// Motion values computed from positions rather than reported by the receiver.
    public struct DerivedMotion: OptionSet, Hashable, Sendable {
        /// One bit per value: 1 speed, 2 course.
        public let rawValue: UInt8
        /// Creates a set from its raw bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// ``LocationFix/speed`` was computed from positions.
        public static let speed = DerivedMotion(rawValue: 1)
        /// ``LocationFix/course`` was computed from positions.
        public static let course = DerivedMotion(rawValue: 2)
    }

    /// Creates a fix; `mode` defaults to 3D when an altitude is given, 2D otherwise.
    public init(
        time: Date, latitude: Double, longitude: Double, altitude: Double? = nil, speed: Double? = nil,
        course: Double? = nil, horizontalAccuracy: Double? = nil, mode: LocationFixMode? = nil,
        satellitesUsed: Int? = nil, quality: LocationQuality = LocationQuality()
    ) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.horizontalAccuracy = horizontalAccuracy
        self.mode = mode ?? (altitude == nil ? .twoDimensional : .threeDimensional)
        self.satellitesUsed = satellitesUsed
        self.quality = quality
    }

    /// Whether the source says the fix is simulated (gpsd status 8, NMEA GGA quality 8 or mode
    /// indicator `S`): not a real position. The fix gate turns it into an update without a fix.
    public var isSimulated: Bool {
        quality.gpsdStatus == 8 || quality.nmeaQuality == 8 || quality.nmeaModeIndicator == "S"
    }
}

/// The quality fields a source reports beside the position; every field is `nil` when the source
/// does not have it.
public struct LocationQuality: Hashable, Sendable {
    /// Horizontal dilution of precision (dimensionless).
    public var hdop: Double?
    /// Vertical dilution of precision (dimensionless).
    public var vdop: Double?
    /// Position (3D) dilution of precision (dimensionless).
    public var pdop: Double?
    /// gpsd's estimated vertical error in metres (`epv`, 95 % confidence).
    public var verticalAccuracy: Double?
    /// gpsd's estimated speed error in metres per second (`eps`).
    public var speedAccuracy: Double?
    /// gpsd's estimated course error in degrees (`epd`).
    public var courseAccuracy: Double?
    /// Climb (positive) or sink rate in metres per second (gpsd `climb`).
    public var climb: Double?
    /// Altitude above the WGS 84 ellipsoid in metres (gpsd `altHAE`).
    public var ellipsoidAltitude: Double?
    /// Geoid separation in metres: ellipsoid height minus mean-sea-level height (NMEA GGA, gpsd `geoidSep`).
    public var geoidSeparation: Double?
    /// gpsd's `status`: 1 GPS, 2 DGPS, 3 RTK fixed, 4 RTK float, 5 dead reckoning, 6 GNSS+DR, 7 time only, 8 simulated.
    public var gpsdStatus: Int?
    /// NMEA GGA fix quality: 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed, 5 RTK float, 6 estimated, 7 manual, 8 simulation.
    public var nmeaQuality: Int?
    /// The NMEA 2.3+ mode indicator of RMC/GNS/GLL (`A` autonomous, `D` differential, `R` RTK, ...).
    public var nmeaModeIndicator: Character?
    /// Age of differential corrections in seconds (NMEA GGA), `nil` if none.
    public var differentialAge: Double?

    /// Creates an empty set of quality fields.
    public init(
        hdop: Double? = nil, vdop: Double? = nil, pdop: Double? = nil, verticalAccuracy: Double? = nil,
        speedAccuracy: Double? = nil, courseAccuracy: Double? = nil, climb: Double? = nil,
        ellipsoidAltitude: Double? = nil, geoidSeparation: Double? = nil, gpsdStatus: Int? = nil,
        nmeaQuality: Int? = nil, nmeaModeIndicator: Character? = nil, differentialAge: Double? = nil
    ) {
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.verticalAccuracy = verticalAccuracy
        self.speedAccuracy = speedAccuracy
        self.courseAccuracy = courseAccuracy
        self.climb = climb
        self.ellipsoidAltitude = ellipsoidAltitude
        self.geoidSeparation = geoidSeparation
        self.gpsdStatus = gpsdStatus
        self.nmeaQuality = nmeaQuality
        self.nmeaModeIndicator = nmeaModeIndicator
        self.differentialAge = differentialAge
    }
}
