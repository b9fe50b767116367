/// Writes a JSON object as `JSONEncoder` writes it, without `JSONEncoder`: no spaces, strings escaped
/// as its writer escapes them, numbers in its forms. For the agent's payloads and records of every
/// fix (issue 24), where `JSONEncoder` cost an encoder object tree, a box per key and a sort of the
/// keys each time.
///
/// The caller writes the members in the order it wants them (`.sortedKeys`' order to give
/// `JSONEncoder`'s bytes with that option), leaves out what `encodeIfPresent` leaves out (a nil
/// optional: no member), and chooses whether `/` is escaped (`JSONEncoder`'s default) or not
/// (`.withoutEscapingSlashes`). A number that is not finite, which JSON cannot hold and
/// `JSONEncoder` refuses, makes ``finish()`` give nil.
package struct DirectJSONWriter {
    private var bytes: [UInt8]
    /// Whether no member of the current object was written yet (no comma before the next).
    private var first = true
    private let escapesSlashes: Bool
    /// Whether a number was not finite.
    private var refused = false

    /// An object to write: `capacity` bytes reserved; `/` in strings written `\/` when
    /// `escapingSlashes`, as is when not.
    package init(capacity: Int, escapingSlashes: Bool) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
        escapesSlashes = escapingSlashes
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
    package mutating func member(_ name: StaticString, string value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// `"name":` and the number, unless it is nil; a number that is not finite is refused.
    package mutating func member(_ name: StaticString, number value: Double?) {
        guard let value else { return }
        guard value.isFinite else {
            refused = true
            return
        }
        key(name)
        number(value)
    }

    /// `"name":` and the integer, unless it is nil.
    package mutating func member(_ name: StaticString, integer value: Int?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `"name":` and the unsigned integer, unless it is nil.
    package mutating func member(_ name: StaticString, integer value: UInt64?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `"name":` and `true` or `false`, unless it is nil.
    package mutating func member(_ name: StaticString, bool value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    /// `"name":` and `json`, a value already written as JSON (by `JSONEncoder`, with the same
    /// settings), copied as is.
    package mutating func member(_ name: StaticString, json: [UInt8]) {
        key(name)
        bytes.append(contentsOf: json)
    }

    /// `"name":` and an object whose members `body` writes.
    package mutating func member(_ name: StaticString, object body: (inout DirectJSONWriter) -> Void) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        first = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// A string, escaped as `JSONEncoder` escapes it: `"` and `\` with a backslash, `/` too when
    /// slashes are escaped, the control characters U+0000-U+001F as `\b`, `\t`, `\n`, `\f`, `\r` or
    /// `\u00XX` (lowercase hex digits), everything else (DEL, every non-ASCII scalar) as its UTF-8 bytes.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard
                    byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                        || (byte == UInt8(ascii: "/") && escapesSlashes)
                else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
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
    /// (`description`: `44.0689`, `1e-05`, `1e+16`), which `JSONDecoder` reads back exactly, without a
    /// trailing `.0` (`12`, not `12.0`).
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

    /// The object closed; its bytes, or nil when a number was not finite.
    package mutating func finish() -> [UInt8]? {
        guard !refused else { return nil }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
