/// The NMEA 0183 sentences the reader uses, decoded into plain values (SI units where NMEA has knots).
///
/// Times of day are milliseconds since midnight UTC; latitudes and longitudes are signed degrees.
enum NMEASentence: Equatable {
    /// Recommended minimum data: time, status, position, speed, course, date.
    case rmc(RMC)
    /// Fix data: time, position, quality, satellites, HDOP, altitude.
    case gga(GGA)
    /// GNSS fix data (multi-constellation GGA).
    case gns(GNS)
    /// Geographic position: position, time, status.
    case gll(GLL)
    /// DOP and active satellites: fix type, PRNs used, PDOP/HDOP/VDOP.
    case gsa(GSA)
    /// Course and speed over ground.
    case vtg(VTG)
    /// Time and date.
    case zda(ZDA)
    /// Pseudorange error statistics: latitude and longitude error in metres.
    case gst(GST)

    struct RMC: Equatable {
        var timeOfDay: Int?
        var valid: Bool?
        var latitude: Double?
        var longitude: Double?
        var speed: Double?
        var course: Double?
        var day: Int?
        var modeIndicator: Character?
    }

    struct GGA: Equatable {
        /// The talker (`GP`, `GN`, `GL`, ...), as its two ASCII bytes.
        var talker: UInt16
        var timeOfDay: Int?
        var latitude: Double?
        var longitude: Double?
        var quality: Int?
        var satellites: Int?
        var hdop: Double?
        var altitude: Double?
        var geoidSeparation: Double?
        var differentialAge: Double?
    }

    struct GNS: Equatable {
        var timeOfDay: Int?
        var latitude: Double?
        var longitude: Double?
        /// One mode character per constellation; all `N` means no fix.
        var modes: String
        var satellites: Int?
        var hdop: Double?
        var altitude: Double?
        var geoidSeparation: Double?
    }

    struct GLL: Equatable {
        var latitude: Double?
        var longitude: Double?
        var timeOfDay: Int?
        var valid: Bool?
        var modeIndicator: Character?
    }

    struct GSA: Equatable {
        /// 1 no fix, 2 2D, 3 3D.
        var fixType: Int?
        var satellitesUsed: Int
        var pdop: Double?
        var hdop: Double?
        var vdop: Double?
    }

    struct VTG: Equatable {
        var course: Double?
        var speed: Double?
        var modeIndicator: Character?
    }

    struct ZDA: Equatable {
        var timeOfDay: Int?
        var day: Int?
    }

    struct GST: Equatable {
        var timeOfDay: Int?
        var latitudeError: Double?
        var longitudeError: Double?
    }

    /// A distinct bit for each kind of sentence.
    var kindBit: UInt16 {
        switch self {
        case .rmc: 1
        case .gga: 2
        case .gns: 4
        case .gll: 8
        case .gsa: 16
        case .vtg: 32
        case .zda: 64
        case .gst: 128
        }
    }

    /// The kinds that carry a position (and its validity).
    static let positionKinds: UInt16 = 1 | 2 | 4 | 8

    /// Whether the sentence's layout always has a time field (empty when the receiver has no time).
    var alwaysHasTimeField: Bool {
        switch self {
        case .rmc, .gga, .gns: true
        default: false
        }
    }

    /// The time of day the sentence carries, if any.
    var timeOfDay: Int? {
        switch self {
        case .rmc(let s): s.timeOfDay
        case .gga(let s): s.timeOfDay
        case .gns(let s): s.timeOfDay
        case .gll(let s): s.timeOfDay
        case .zda(let s): s.timeOfDay
        case .gst(let s): s.timeOfDay
        case .gsa, .vtg: nil
        }
    }
}
