import FoundationEssentials
import LiveActivity

extension TrackPoint {
    /// The point's JSON as ``WireCodec`` sends it, written without `JSONEncoder`: the same bytes as
    /// ``ContentJSON``'s encoder gives (keys sorted, slashes unescaped, `time` in seconds rounded to
    /// milliseconds, absent optionals omitted, every number in the form `JSONEncoder` writes it).
    /// Nil when a number is not finite: `JSONEncoder` then says why the point cannot be sent.
    ///
    /// The agent encodes one point a fix; through `JSONEncoder` that was 8.6 % of its CPU at 1 Hz
    /// (issue 24: an encoder object tree, a box per key, the keys sorted for each point).
    /// `TrackPointDirectJSONTests` hold it to `JSONEncoder`'s bytes (hostile strings, extreme
    /// numbers, absent fields, and random points); `scripts/bench-micro --filter 'Track point'`
    /// measures both.
    @_spi(Fuzzing)
    public func directJSON() -> [UInt8]? {
        // Every number first: a point with a number JSON cannot hold is JSONEncoder's to refuse.
        let seconds = ContentJSON.seconds(time)
        guard seconds.isFinite, latitude.isFinite, longitude.isFinite, altitude?.isFinite ?? true,
            speed?.isFinite ?? true, course?.isFinite ?? true, horizontalAccuracy?.isFinite ?? true
        else { return nil }
        var json = DirectJSONWriter(capacity: 320 + activity.utf8.count + device.rawValue.utf8.count)
        // The keys in the order `.sortedKeys` gives them; an absent optional is no member.
        json.member("activity", string: activity)
        json.member("altitude", number: altitude)
        json.member("course", number: course)
        json.member("device", string: device.rawValue)
        json.member("fix", string: fix?.rawValue)
        json.member("horizontalAccuracy", number: horizontalAccuracy)
        json.member("latitude", number: latitude)
        json.member("longitude", number: longitude)
        json.member("satellites", integer: satellites)
        json.member("schema", string: Self.schema)
        json.member("seq", integer: seq)
        json.member("speed", number: speed)
        json.member("time", number: seconds)
        return json.finish()
    }
}

/// Writes one flat JSON object as `JSONEncoder` with `.withoutEscapingSlashes` does: no spaces,
/// strings escaped as its writer escapes them, numbers in its forms. The caller writes the keys in
/// sorted order and only finite numbers.
struct DirectJSONWriter {
    private var bytes: [UInt8]
    /// Whether no member was written yet (no comma before the next).
    private var first = true

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// `"name":`, after a comma unless it is the first key. `name` needs no escaping.
    private mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"name":` and the string, unless it is nil.
    mutating func member(_ name: StaticString, string value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"name":` and the number, unless it is nil.
    mutating func member(_ name: StaticString, number value: Double?) {
        guard let value else { return }
        key(name)
        number(value)
    }

    /// `"name":` and the integer, unless it is nil.
    mutating func member(_ name: StaticString, integer value: Int?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    /// A string, escaped as `JSONEncoder` escapes it: `"` and `\` with a backslash, the control
    /// characters U+0000-U+001F as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00XX` (lowercase hex digits),
    /// everything else (`/`, DEL, every non-ASCII scalar) as its UTF-8 bytes.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    hex.withUTF8Buffer { digits in
                        bytes.append(digits[Int(byte >> 4)])
                        bytes.append(digits[Int(byte & 0xF)])
                    }
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A finite `Double` as `JSONEncoder` writes it: Swift's shortest round-trip form
    /// (`description`: `44.0689`, `1e-05`, `1e+16`) without a trailing `.0` (`12`, not `12.0`).
    private mutating func number(_ value: Double) {
        let text = value.description.utf8
        if text.count >= 2, text.last == UInt8(ascii: "0"),
            text[text.index(text.endIndex, offsetBy: -2)] == UInt8(ascii: ".")
        {
            bytes.append(contentsOf: text.dropLast(2))
        } else {
            bytes.append(contentsOf: text)
        }
    }

    /// An integer in decimal.
    private mutating func integer(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// The object closed; its bytes.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
