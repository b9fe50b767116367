/// One JSON value of a ``JSONObject``.
public enum JSONValue: Hashable, Sendable {
    /// A string, escaped when written.
    case string(String)
    /// A number written as an integer.
    case int(Int)
    /// A finite number; an integral one is written without a fraction (`60`, not `60.0`).
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// A nested object.
    case object(JSONObject)
    /// An array of values.
    case array([JSONValue])

    /// The value as the board's lines write it, such as `"two pallets waiting"` or `2`.
    public var text: String {
        var output = JSONText(capacity: 32)
        output.append(value: self)
        return output.text
    }
}

/// A flat, sorted-keys JSON object written by hand: the board's JSON lines, thousands per second.
///
/// Writes what `JSONSerialization` with `.sortedKeys` and `.withoutEscapingSlashes` writes for the
/// same values, at a fraction of the cost: `JSONSerialization` bridges every value through `Any`
/// and compares keys with the system locale's collator, which took 0.4 ms a row (4 s for 10,000
/// rows). Keys are sorted by their UTF-8 bytes, which is the locale's order for the board's keys
/// (lowercase ASCII, `-`, and camelCase names that differ from their neighbours in a lowercase
/// letter). A non-finite number is written as `null`.
public struct JSONObject: Hashable, Sendable {
    private var members: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// The value of `key`; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    /// The object on one line, keys sorted.
    public var text: String {
        var output = JSONText(capacity: 64 + members.count * 24)
        output.append(object: self)
        return output.text
    }

    /// The members in the keys' order: by their UTF-8 bytes.
    fileprivate var sortedMembers: [(key: String, value: JSONValue)] {
        members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }
}

/// JSON text written as UTF-8 bytes: the one writer of the board's lines (``JSONObject``, the activity
/// line of ``SortedJSONWriter``). Appending to a `String` cost about 60,000 instructions an activity
/// line (callgrind), a literal or a number at a time through string interpolation, and appending to an
/// array still 15,000 (a uniqueness check and a call to memcpy for every piece); a buffer of its own
/// costs a few instructions a byte.
struct JSONText: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The text written so far.
    var text: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    /// Makes room for `more` bytes.
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        let grown = max(capacity * 2, count + more)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: base, count: count)
        base.deallocate()
        (base, capacity) = (moved, grown)
    }

    private mutating func append(byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    private mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        for byte in bytes {
            base[count] = byte
            count += 1
        }
    }

    mutating func append(_ literal: StaticString) {
        append(bytes: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    mutating func append(value: JSONValue) {
        switch value {
        case .string(let value): append(string: value)
        case .int(let value): append(int: value)
        case .number(let value): append(number: value)
        case .bool(let value): append(value ? "true" : "false")
        case .object(let value): append(object: value)
        case .array(let values):
            append("[")
            for (index, element) in values.enumerated() {
                if index > 0 { append(",") }
                append(value: element)
            }
            append("]")
        }
    }

    mutating func append(object: JSONObject) {
        append("{")
        for (index, member) in object.sortedMembers.enumerated() {
            if index > 0 { append(",") }
            append(string: member.key)
            append(":")
            append(value: member.value)
        }
        append("}")
    }

    mutating func append(int value: Int) {
        if value < 0 { append(byte: UInt8(ascii: "-")) }
        appendDigits(of: value.magnitude)
    }

    /// The decimal digits of `value`, at least `width` of them (zeros in front).
    private mutating func appendDigits(of value: UInt, width: Int = 1) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        digits = max(digits, width)
        reserve(digits)
        var (remaining, index) = (value, count + digits)
        while index > count {
            index -= 1
            base[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        }
        count += digits
    }

    /// A finite number as `Double.description` writes it (the shortest digits that read back as the
    /// same number), and an integral one without `.0`, as `JSONSerialization` writes them; `null` for
    /// a number that is not finite.
    mutating func append(number: Double) {
        guard number.isFinite else { return append("null") }
        let magnitude = number.magnitude
        if magnitude < 0x1p53, magnitude == magnitude.rounded(.towardZero) {
            if number.sign == .minus { append(byte: UInt8(ascii: "-")) }
            return appendDigits(of: UInt(magnitude))
        }
        if magnitude >= 1e-3, magnitude < 1e15, appendShortDecimal(number) { return }
        var text = number.description
        text.withUTF8 { text in
            let integral = text.count > 2 && text[text.count - 2] == UInt8(ascii: ".") && text.last == UInt8(ascii: "0")
            append(bytes: integral ? UnsafeBufferPointer(rebasing: text.dropLast(2)) : text)
        }
    }

    /// Writes `number` with the fewest fraction digits (1 to 9) that read back as it, when exactly one
    /// decimal of that many digits does: then it is the shortest such text, which `description` writes
    /// too. Most of the board's numbers are such decimals (`52.520008`, `1700000060.123`); false,
    /// writing nothing, for the others.
    private mutating func appendShortDecimal(_ number: Double) -> Bool {
        var scale = 1.0
        for digits in 1...9 {
            scale *= 10
            let scaled = (number.magnitude * scale).rounded()
            guard scaled < 0x1p53 else { return false }
            guard scaled / scale == number.magnitude else { continue }
            // Another decimal of as many digits could read back the same: leave it to `description`.
            guard number.ulp * scale < 1 else { return false }
            let power = UInt(scale)
            if number.sign == .minus { append(byte: UInt8(ascii: "-")) }
            appendDigits(of: UInt(scaled) / power)
            append(byte: UInt8(ascii: "."))
            appendDigits(of: UInt(scaled) % power, width: digits)
            return true
        }
        return false
    }

    mutating func append(string: String) {
        append(byte: UInt8(ascii: "\""))
        if string.utf8.withContiguousStorageIfAvailable({ append(escaping: $0) }) == nil {
            for byte in string.utf8 { append(escaping: byte) }
        }
        append(byte: UInt8(ascii: "\""))
    }

    private mutating func append(escaping bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        for byte in bytes { append(escaping: byte) }
    }

    private mutating func append(escaping byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        case UInt8(ascii: "\n"): append("\\n")
        case UInt8(ascii: "\r"): append("\\r")
        case UInt8(ascii: "\t"): append("\\t")
        case 0..<0x20:
            let hex: StaticString = "0123456789abcdef"
            append("\\u00")
            append(byte: hex.utf8Start[Int(byte >> 4)])
            append(byte: hex.utf8Start[Int(byte & 0xF)])
        default: append(byte: byte)
        }
    }
}

/// A JSON object written member by member in the order given, which must be the keys' sorted order:
/// the board's most frequent line (an activity) without a dictionary to fill and sort (a third of
/// its cost). Writes what ``JSONObject`` writes for the same members.
struct SortedJSONWriter: ~Copyable {
    private var text: JSONText
    private var first = true

    init(capacity: Int) {
        text = JSONText(capacity: capacity)
        text.append("{")
    }

    /// Appends `key` and `value`, or nothing when `value` is nil.
    mutating func add(_ key: StaticString, _ value: JSONValue?) {
        guard let value else { return }
        text.append(first ? "\"" : ",\"")
        first = false
        text.append(key)
        text.append("\":")
        text.append(value: value)
    }

    /// The object, closed.
    mutating func finish() -> String {
        text.append("}")
        return text.text
    }
}
