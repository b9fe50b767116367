import FoundationEssentials
import MyelineWire

/// One OwnTracks message as Myeline reads and writes it: a location, a last will, a command, or
/// another type Myeline does not handle (waypoints, transitions, cards...).
public enum OwnTracksMessage: Hashable, Sendable {
    /// `"_type":"location"`.
    case location(OwnTracksLocation)
    /// `"_type":"lwt"`: the client that published on this topic lost its connection; `tst` is when
    /// it had connected, whole seconds since the Unix epoch.
    case lastWill(timestamp: Int)
    /// `"_type":"cmd"` with its `action`, such as `reportLocation`.
    case command(action: String)
    /// Any other `_type`, named.
    case other(type: String)

    /// The `action` of a command asking the device to publish its location now.
    public static let reportLocationAction = "reportLocation"
}

/// Encodes and decodes OwnTracks JSON payloads. Pure; no I/O.
public enum OwnTracksCodec {
    /// The largest payload decoded, bytes; phones send well under 1 KiB.
    public static let maximumPayloadSize = 16 * 1024

    /// The message as one line of JSON with sorted keys (`_type` first), as golden tests pin it.
    public static func encode(_ message: OwnTracksMessage) -> [UInt8] {
        var wire = Wire()
        switch message {
        case .location(let location):
            wire.type = "location"
            wire.lat = location.latitude
            wire.lon = location.longitude
            wire.tst = location.timestamp
            wire.acc = location.accuracy
            wire.alt = location.altitude
            wire.vel = location.velocity
            wire.cog = location.course
            wire.tid = location.trackerID
            wire.t = location.trigger
            wire.batt = location.battery
        case .lastWill(let timestamp):
            wire.type = "lwt"
            wire.tst = timestamp
        case .command(let action):
            wire.type = "cmd"
            wire.action = action
        case .other(let type):
            wire.type = type
        }
        return InteropJSON.encode(wire)
    }

    /// The written form: every field optional, absent ones left out.
    private struct Wire: Encodable {
        var type = ""
        var action: String?
        var lat: Double?
        var lon: Double?
        var tst: Int?
        var acc: Int?
        var alt: Int?
        var vel: Int?
        var cog: Int?
        var tid: String?
        var t: String?
        var batt: Int?

        enum CodingKeys: String, CodingKey {
            case type = "_type"
            case action, lat, lon, tst, acc, alt, vel, cog, tid, t, batt
        }
    }

    /// What a payload holds, with the fields that were left out because they were invalid.
    public struct Decoded: Hashable, Sendable {
        /// The message.
        public var message: OwnTracksMessage
        /// The optional fields dropped because their type or range was wrong (such as `acc`), sorted.
        public var droppedFields: [String]

        /// Creates a decoding result.
        public init(message: OwnTracksMessage, droppedFields: [String]) {
            self.message = message
            self.droppedFields = droppedFields
        }
    }

    /// Why a payload is not an OwnTracks message Myeline can use.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, for logs and the board's rejected count.
        public var reason: String

        /// Creates an error saying what is wrong.
        public init(reason: String) {
            self.reason = reason
        }

        public var description: String { reason }
    }

    /// Decodes a payload leniently, as the board shows phones: a location needs `lat`, `lon` and
    /// `tst` of the right types and ranges (the schema's required fields; `tst` a whole number of
    /// seconds, as in the lwt); every optional field with
    /// a wrong type or range is dropped and named in ``Decoded/droppedFields``.
    /// - Throws: ``DecodingError`` when the payload nests arrays or objects deeper than
    ///   `WireCodec.maximumNesting`, is not a JSON object with a string `_type`, or a
    ///   location or lwt lacks a valid required field, or a cmd has no string `action`.
    public static func decode(_ payload: [UInt8]) throws(DecodingError) -> Decoded {
        guard payload.count <= maximumPayloadSize else {
            throw DecodingError(reason: "payload of \(payload.count) bytes is too large")
        }
        if WireCodec.excessiveNesting(in: payload) != nil {
            throw DecodingError(
                reason: "arrays or objects nested more than \(WireCodec.maximumNesting) deep")
        }
        guard let object = try? JSONDecoder().decode([String: InteropJSON.Value].self, from: Data(payload)) else {
            throw DecodingError(reason: "not a JSON object")
        }
        guard case .string(let type)? = object["_type"] else {
            throw DecodingError(reason: "no string _type")
        }
        var fields = Fields(object: object)
        switch type {
        case "location":
            guard let latitude = fields.number("lat", in: -90...90) else {
                throw DecodingError(reason: "location without a valid lat (degrees, -90 to 90)")
            }
            guard let longitude = fields.number("lon", in: -180...180) else {
                throw DecodingError(reason: "location without a valid lon (degrees, -180 to 180)")
            }
            guard let timestamp = fields.integer("tst", in: 0...Self.latestTimestamp, fractions: .refused) else {
                throw DecodingError(reason: "location without a valid tst (whole seconds since 1970)")
            }
            let location = OwnTracksLocation(
                latitude: latitude, longitude: longitude, timestamp: timestamp,
                accuracy: fields.integer("acc", in: 0...10_000_000),
                altitude: fields.integer("alt", in: -20_000...100_000),
                velocity: fields.integer("vel", in: 0...100_000), course: fields.integer("cog", in: 0...360),
                trackerID: fields.string("tid", maximumLength: 64), trigger: fields.string("t", maximumLength: 1),
                battery: fields.integer("batt", in: 0...100))
            return Decoded(message: .location(location), droppedFields: fields.dropped.sorted())
        case "lwt":
            guard let timestamp = fields.integer("tst", in: 0...Self.latestTimestamp, fractions: .refused) else {
                throw DecodingError(reason: "lwt without a valid tst (whole seconds since 1970)")
            }
            return Decoded(message: .lastWill(timestamp: timestamp), droppedFields: [])
        case "cmd":
            guard case .string(let action)? = object["action"] else {
                throw DecodingError(reason: "cmd without a string action")
            }
            return Decoded(message: .command(action: action), droppedFields: [])
        default:
            return Decoded(message: .other(type: type), droppedFields: [])
        }
    }

    /// The year 9999's last second: a later `tst` is garbage.
    static let latestTimestamp = 253_402_300_799

    /// Reads typed fields out of a parsed object, remembering the ones present but invalid.
    private struct Fields {
        let object: [String: InteropJSON.Value]
        var dropped: [String] = []

        mutating func number(_ key: String, in range: ClosedRange<Double>) -> Double? {
            guard let value = object[key] else { return nil }
            guard case .number(let number) = value, number.isFinite, range.contains(number) else {
                dropped.append(key)
                return nil
            }
            return number
        }

        /// What an integer field does with a number that has a fraction.
        enum Fractions {
            /// Rounded: some apps write `"acc": 12.5`.
            case rounded
            /// Invalid: `tst` is whole seconds, an integer in the schema.
            case refused
        }

        /// An integer; a number with a fraction is rounded or invalid, as `fractions` says.
        mutating func integer(_ key: String, in range: ClosedRange<Int>, fractions: Fractions = .rounded) -> Int? {
            guard let value = object[key] else { return nil }
            guard case .number(let number) = value, number.isFinite,
                fractions == .rounded || number == number.rounded(),
                Double(range.lowerBound) <= number.rounded(), number.rounded() <= Double(range.upperBound)
            else {
                dropped.append(key)
                return nil
            }
            return Int(number.rounded())
        }

        mutating func string(_ key: String, maximumLength: Int) -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let text) = value, !text.isEmpty, text.count <= maximumLength,
                !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                dropped.append(key)
                return nil
            }
            return text
        }
    }
}
