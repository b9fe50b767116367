import FoundationEssentials

/// The gpsd JSON messages the client uses, decoded; every field but the class may be absent.
enum GpsdMessage: Equatable {
    /// The greeting: gpsd's release and protocol version.
    case version(GpsdVersion)
    /// The devices gpsd knows.
    case devices([GpsdDevice])
    /// One device changed: activated, or gone (`activated` 0).
    case device(GpsdDevice)
    /// Time-position-velocity.
    case tpv(GpsdTPV)
    /// Satellites and dilutions of precision.
    case sky(GpsdSKY)
    /// gpsd could not do what was asked.
    case error(message: String)
    /// Another class (WATCH, GST, ATT, PPS, TOFF, ...), not used.
    case other
}

/// gpsd's VERSION greeting.
struct GpsdVersion: Equatable {
    var release: String?
    var protocolMajor: Int?
    var protocolMinor: Int?
}

/// A device in a DEVICE or DEVICES message.
struct GpsdDevice: Equatable {
    var path: String?
    var driver: String?
    /// `true` when gpsd reads it, `false` when gpsd reports it gone (`"activated":0`), `nil` if not said.
    var activated: Bool?
}

/// A TPV message's fields, in SI units as gpsd sends them.
struct GpsdTPV: Equatable {
    var device: String?
    var mode: Int?
    var status: Int?
    var time: Date?
    var latitude: Double?
    var longitude: Double?
    var altitudeMSL: Double?
    var altitudeHAE: Double?
    var altitude: Double?
    var track: Double?
    var speed: Double?
    var climb: Double?
    var eph: Double?
    var epx: Double?
    var epy: Double?
    var epv: Double?
    var eps: Double?
    var epd: Double?
    var geoidSeparation: Double?

    /// Whether this TPV holds a fix: mode 2 or 3 and a position.
    var isFix: Bool { (mode ?? 0) >= 2 && latitude != nil && longitude != nil }

    /// Whether this TPV holds an altitude of any kind.
    var hasAltitude: Bool { altitudeMSL != nil || altitudeHAE != nil || altitude != nil }

    /// The fields of a fix that gpsd may send in a later TPV of the same epoch (`altitude`: any of
    /// them, as ``hasAltitude``; `ellipsoidAltitude`: `altHAE` besides).
    struct Fields: OptionSet, Equatable {
        let rawValue: UInt16
        static let altitude = Fields(rawValue: 1 << 0)
        static let ellipsoidAltitude = Fields(rawValue: 1 << 1)
        static let speed = Fields(rawValue: 1 << 2)
        static let track = Fields(rawValue: 1 << 3)
        static let climb = Fields(rawValue: 1 << 4)
        static let horizontalError = Fields(rawValue: 1 << 5)
        static let verticalError = Fields(rawValue: 1 << 6)
        static let speedError = Fields(rawValue: 1 << 7)
        static let trackError = Fields(rawValue: 1 << 8)
        static let geoidSeparation = Fields(rawValue: 1 << 9)
        static let status = Fields(rawValue: 1 << 10)
        static let threeDimensional = Fields(rawValue: 1 << 11)
    }

    /// Which of ``Fields`` this TPV (or merged epoch) holds.
    var fields: Fields {
        var fields: Fields = []
        if hasAltitude { fields.insert(.altitude) }
        if altitudeHAE != nil { fields.insert(.ellipsoidAltitude) }
        if speed != nil { fields.insert(.speed) }
        if track != nil { fields.insert(.track) }
        if climb != nil { fields.insert(.climb) }
        if eph != nil || (epx != nil && epy != nil) { fields.insert(.horizontalError) }
        if epv != nil { fields.insert(.verticalError) }
        if eps != nil { fields.insert(.speedError) }
        if epd != nil { fields.insert(.trackError) }
        if geoidSeparation != nil { fields.insert(.geoidSeparation) }
        if status != nil { fields.insert(.status) }
        if (mode ?? 0) >= 3 { fields.insert(.threeDimensional) }
        return fields
    }

    /// Takes every field `other` has, keeping the rest (gpsd repeats an epoch with more fields).
    mutating func merge(_ other: GpsdTPV) {
        func take<T>(_ field: WritableKeyPath<GpsdTPV, T?>) {
            if let value = other[keyPath: field] { self[keyPath: field] = value }
        }
        take(\.device)
        take(\.mode)
        take(\.status)
        take(\.time)
        take(\.latitude)
        take(\.longitude)
        take(\.altitudeMSL)
        take(\.altitudeHAE)
        take(\.altitude)
        take(\.track)
        take(\.speed)
        take(\.climb)
        take(\.eph)
        take(\.epx)
        take(\.epy)
        take(\.epv)
        take(\.eps)
        take(\.epd)
        take(\.geoidSeparation)
    }
}

/// A SKY message's summary.
struct GpsdSKY: Equatable {
    var device: String?
    /// The epoch's time, which gpsd 3.23 and later send; `nil` when absent.
    var time: Date?
    var hdop: Double?
    var vdop: Double?
    var pdop: Double?
    /// `uSat`, or else the satellites listed with `"used":true`.
    var satellitesUsed: Int?
}

extension GpsdMessage {
    /// Why a line could not be decoded.
    enum Failure: Error, Equatable {
        /// Not a JSON object.
        case notJSON
        /// An object without a string `class`.
        case noClass
        /// A used field of the wrong type or value (a string latitude, a bad time).
        case invalidField
    }

    /// Decodes one line holding one JSON object.
    static func decode(_ line: UnsafeBufferPointer<UInt8>) -> Result<GpsdMessage, Failure> {
        let scanner = GpsdJSONScanner(bytes: line)
        let whole = 0..<line.count
        // Find the class first: gpsd writes it first, but JSON does not promise it. The search
        // stops at a class string: the message's own pass reads the rest and checks it, so that a
        // line is scanned once (a SKY's satellites are most of its bytes), not twice.
        var classRange: Range<Int>? = nil
        var badClass = false
        let search = scanner.scanMembers(in: whole) { key, value -> Bool in
            guard classRange == nil, scanner.key(key, is: "class") else { return true }
            guard case .string(let range, _) = value else {
                badClass = true
                return true
            }
            classRange = range
            return badClass
        }
        guard search != .malformed else { return .failure(.notJSON) }
        guard let classRange, !badClass else { return .failure(.noClass) }
        var decoder = MessageFields(scanner: scanner, line: line)
        let message: GpsdMessage
        if scanner.key(classRange, is: "TPV") {
            message = .tpv(decoder.tpv())
        } else if scanner.key(classRange, is: "SKY") {
            message = .sky(decoder.sky())
        } else if scanner.key(classRange, is: "VERSION") {
            message = .version(decoder.version())
        } else if scanner.key(classRange, is: "DEVICES") {
            message = .devices(decoder.devices())
        } else if scanner.key(classRange, is: "DEVICE") {
            message = .device(decoder.device(in: whole, topLevel: true))
        } else if scanner.key(classRange, is: "ERROR") {
            message = .error(message: decoder.errorMessage())
        } else {
            guard search == .complete || scanner.forEachMember(in: whole, { _, _ in }) else {
                return .failure(.notJSON)
            }
            return .success(.other)
        }
        guard !decoder.malformed else { return .failure(.notJSON) }
        guard !decoder.failed else { return .failure(.invalidField) }
        return .success(message)
    }
}

/// Reads typed members; a member of the wrong type sets `failed`.
private struct MessageFields {
    let scanner: GpsdJSONScanner
    let line: UnsafeBufferPointer<UInt8>
    var failed = false
    /// Whether the line's text is not a JSON object: found by the message's own pass over it,
    /// when the class was found before the end of the text.
    var malformed = false

    mutating func number(_ value: GpsdJSONScanner.Value) -> Double? {
        guard case .number(let range) = value,
            let number = DecimalParsing.double(UnsafeBufferPointer(rebasing: line[range]))
        else {
            // gpsd writes null for some unknown values; anything else of another type is an error.
            if case .null = value { return nil }
            failed = true
            return nil
        }
        return number
    }

    mutating func integer(_ value: GpsdJSONScanner.Value) -> Int? {
        guard let number = number(value) else { return nil }
        guard number == number.rounded(), abs(number) < 1e15 else {
            failed = true
            return nil
        }
        return Int(number)
    }

    mutating func string(_ value: GpsdJSONScanner.Value) -> String? {
        guard case .string(let range, let escaped) = value else {
            if case .null = value { return nil }
            failed = true
            return nil
        }
        return scanner.string(range, escaped: escaped)
    }

    mutating func time(_ value: GpsdJSONScanner.Value) -> Date? {
        switch value {
        case .string(let range, false):
            guard let date = CivilTime.parseISO8601(UnsafeBufferPointer(rebasing: line[range])) else {
                failed = true
                return nil
            }
            return date
        case .number:
            // gpsd before 3.10 sent seconds since 1970; as for ISO 8601 times, up to the end of year 9999.
            guard let seconds = number(value) else { return nil }
            guard (0...CivilTime.latestSecond).contains(seconds) else {
                failed = true
                return nil
            }
            return Date(timeIntervalSince1970: seconds)
        case .null:
            return nil
        default:
            failed = true
            return nil
        }
    }

    mutating func tpv() -> GpsdTPV {
        var tpv = GpsdTPV()
        let wellFormed = scanner.forEachMember(in: 0..<line.count) { key, value in
            switch key.count {
            case 3:
                if scanner.key(key, is: "lat") {
                    tpv.latitude = number(value)
                } else if scanner.key(key, is: "lon") {
                    tpv.longitude = number(value)
                } else if scanner.key(key, is: "alt") {
                    tpv.altitude = number(value)
                } else if scanner.key(key, is: "eph") {
                    tpv.eph = number(value)
                } else if scanner.key(key, is: "epx") {
                    tpv.epx = number(value)
                } else if scanner.key(key, is: "epy") {
                    tpv.epy = number(value)
                } else if scanner.key(key, is: "epv") {
                    tpv.epv = number(value)
                } else if scanner.key(key, is: "eps") {
                    tpv.eps = number(value)
                } else if scanner.key(key, is: "epd") {
                    tpv.epd = number(value)
                }
            case 4:
                if scanner.key(key, is: "mode") {
                    tpv.mode = integer(value)
                } else if scanner.key(key, is: "time") {
                    tpv.time = time(value)
                }
            case 5:
                if scanner.key(key, is: "track") {
                    tpv.track = number(value)
                } else if scanner.key(key, is: "speed") {
                    tpv.speed = number(value)
                } else if scanner.key(key, is: "climb") {
                    tpv.climb = number(value)
                }
            case 6:
                if scanner.key(key, is: "device") {
                    tpv.device = string(value)
                } else if scanner.key(key, is: "status") {
                    tpv.status = integer(value)
                } else if scanner.key(key, is: "altMSL") {
                    tpv.altitudeMSL = number(value)
                } else if scanner.key(key, is: "altHAE") {
                    tpv.altitudeHAE = number(value)
                }
            case 8:
                if scanner.key(key, is: "geoidSep") { tpv.geoidSeparation = number(value) }
            default:
                break
            }
        }
        if !wellFormed { malformed = true }
        return tpv
    }

    mutating func sky() -> GpsdSKY {
        var sky = GpsdSKY()
        var listedUsed: Int? = nil
        let wellFormed = scanner.forEachMember(in: 0..<line.count) { key, value in
            if scanner.key(key, is: "hdop") {
                sky.hdop = number(value)
            } else if scanner.key(key, is: "vdop") {
                sky.vdop = number(value)
            } else if scanner.key(key, is: "pdop") {
                sky.pdop = number(value)
            } else if scanner.key(key, is: "uSat") {
                sky.satellitesUsed = integer(value)
            } else if scanner.key(key, is: "device") {
                sky.device = string(value)
            } else if scanner.key(key, is: "time") {
                sky.time = time(value)
            } else if sky.satellitesUsed == nil, scanner.key(key, is: "satellites"), case .array(let range) = value {
                // Counted only without a uSat before it (gpsd 3.22 sends nSat and uSat first; the
                // scan of the value checked the list's brackets and strings): the walk through
                // every satellite was most of the CPU a SKY cost.
                var used = 0
                let valid = scanner.forEachElement(in: range) { element in
                    guard case .object(let satellite) = element else { return }
                    _ = scanner.forEachMember(in: satellite) { key, value in
                        if scanner.key(key, is: "used"), case .bool(true) = value { used += 1 }
                    }
                }
                if valid { listedUsed = used } else { failed = true }
            }
        }
        if !wellFormed { malformed = true }
        if sky.satellitesUsed == nil { sky.satellitesUsed = listedUsed }
        return sky
    }

    mutating func version() -> GpsdVersion {
        var version = GpsdVersion()
        let wellFormed = scanner.forEachMember(in: 0..<line.count) { key, value in
            if scanner.key(key, is: "release") {
                version.release = string(value)
            } else if scanner.key(key, is: "proto_major") {
                version.protocolMajor = integer(value)
            } else if scanner.key(key, is: "proto_minor") {
                version.protocolMinor = integer(value)
            }
        }
        if !wellFormed { malformed = true }
        return version
    }

    /// One device: the line's own object (`topLevel`: a DEVICE message, whose text is checked
    /// here), or one of a DEVICES message's list (checked for balance by the list's scan).
    mutating func device(in range: Range<Int>, topLevel: Bool = false) -> GpsdDevice {
        var device = GpsdDevice()
        let wellFormed = scanner.forEachMember(in: range) { key, value in
            if scanner.key(key, is: "path") {
                device.path = string(value)
            } else if scanner.key(key, is: "driver") {
                device.driver = string(value)
            } else if scanner.key(key, is: "activated") {
                switch value {
                case .string: device.activated = true
                case .number: device.activated = (number(value) ?? 0) != 0
                case .null: device.activated = false
                default: failed = true
                }
            }
        }
        if topLevel && !wellFormed { malformed = true }
        return device
    }

    mutating func devices() -> [GpsdDevice] {
        var devices: [GpsdDevice] = []
        let wellFormed = scanner.forEachMember(in: 0..<line.count) { key, value in
            guard scanner.key(key, is: "devices") else { return }
            guard case .array(let range) = value else {
                failed = true
                return
            }
            let valid = scanner.forEachElement(in: range) { element in
                guard case .object(let object) = element else {
                    failed = true
                    return
                }
                devices.append(device(in: object))
            }
            if !valid { failed = true }
        }
        if !wellFormed { malformed = true }
        return devices
    }

    mutating func errorMessage() -> String {
        var message = ""
        let wellFormed = scanner.forEachMember(in: 0..<line.count) { key, value in
            if scanner.key(key, is: "message") { message = string(value) ?? "" }
        }
        if !wellFormed { malformed = true }
        return message
    }
}
