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
        var output = ""
        output.reserveCapacity(64 + members.count * 24)
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        output.append("{")
        let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, key) in keys.enumerated() {
            if index > 0 { output.append(",") }
            Self.write(string: key, to: &output)
            output.append(":")
            Self.write(value: members[key]!, to: &output)
        }
        output.append("}")
    }

    static func write(value: JSONValue, to output: inout String) {
        switch value {
        case .string(let value): write(string: value, to: &output)
        case .int(let value): output.append(String(value))
        case .number(let value): write(number: value, to: &output)
        case .bool(let value): output.append(value ? "true" : "false")
        case .object(let value): value.write(to: &output)
        case .array(let values):
            output.append("[")
            for (index, element) in values.enumerated() {
                if index > 0 { output.append(",") }
                write(value: element, to: &output)
            }
            output.append("]")
        }
    }

    static func write(number: Double, to output: inout String) {
        guard number.isFinite else {
            output.append("null")
            return
        }
        let text = number.description
        output.append(contentsOf: text.hasSuffix(".0") ? text.dropLast(2) : Substring(text))
    }

    static func write(string: String, to output: inout String) {
        output.append("\"")
        // Most strings need no escaping: append them whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(string)
            output.append("\"")
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\u{8}": output.append("\\b")
            case "\u{C}": output.append("\\f")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case "\u{0}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output.append("\"")
    }
}

/// A JSON object written member by member in the order given, which must be the keys' sorted order:
/// the board's most frequent line (an activity) without a dictionary to fill and sort (a third of
/// its cost). Writes what ``JSONObject`` writes for the same members.
struct SortedJSONWriter {
    private(set) var text = "{"
    private var first = true

    init(capacity: Int) {
        text.reserveCapacity(capacity)
    }

    /// Appends `key` and `value`, or nothing when `value` is nil.
    mutating func add(_ key: StaticString, _ value: JSONValue?) {
        guard let value else { return }
        text.append(first ? "\"" : ",\"")
        first = false
        key.withUTF8Buffer { text.append(String(decoding: $0, as: UTF8.self)) }
        text.append("\":")
        JSONObject.write(value: value, to: &text)
    }

    /// The object, closed.
    mutating func finish() -> String {
        text.append("}")
        return text
    }
}
