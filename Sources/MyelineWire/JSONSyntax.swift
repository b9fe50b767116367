import FoundationEssentials
import LiveActivity

/// Why a text is not JSON, in the words of Foundation's `JSONSerialization` (`Invalid value around
/// character 7.`), for the error that `JSONDecoder` gives without a reason ("The given data was not
/// valid JSON."): FoundationEssentials has no `JSONSerialization`, and importing Foundation for it
/// would link ICU into the agent (issue 24).
///
/// One pass with the same rules as `JSONSerialization`'s parser: a value at the top (any value,
/// fragments allowed), strings of valid UTF-8 with valid escapes, numbers that a `Double` holds, at
/// most ``maximumDepth`` arrays and objects inside each other. Only the explanation comes from
/// here; what is accepted is still the decoder's.
enum JSONSyntax {
    /// How deep arrays and objects may nest, as in `JSONSerialization`.
    static let maximumDepth = 512

    /// The explanation of the first syntax error in `data`, or nil when it finds none.
    static func problem(in data: Data) -> String? {
        data.withUnsafeBytes { raw -> String? in
            var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
            do throws(Failure) {
                try parser.document()
                return nil
            } catch {
                return error.description
            }
        }
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String

        static func unexpected(at index: Int) -> Failure {
            Failure(description: "Invalid value around character \(index).")
        }
        static let endOfFile = Failure(description: "Unexpected end of file during JSON parse.")
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func document() throws(Failure) {
            skipWhitespace()
            try value()
            skipWhitespace()
            if index < bytes.count { throw .unexpected(at: index) }
        }

        private mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        private mutating func value() throws(Failure) {
            guard index < bytes.count else { throw .endOfFile }
            switch bytes[index] {
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "{"): try container(closing: UInt8(ascii: "}"), keyed: true)
            case UInt8(ascii: "["): try container(closing: UInt8(ascii: "]"), keyed: false)
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw .unexpected(at: index)
            }
        }

        private mutating func literal(_ word: StaticString) throws(Failure) {
            for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
                guard index < bytes.count else { throw .endOfFile }
                guard bytes[index] == expected else { throw .unexpected(at: index) }
                index += 1
            }
        }

        private mutating func container(closing: UInt8, keyed: Bool) throws(Failure) {
            depth += 1
            guard depth <= JSONSyntax.maximumDepth else {
                throw Failure(description: "Too many nested arrays or dictionaries around character \(index + 1).")
            }
            index += 1
            skipWhitespace()
            if try closes(closing) { return }
            while true {
                if keyed {
                    try expect(UInt8(ascii: "\""))
                    try string()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    index += 1
                    skipWhitespace()
                }
                try value()
                skipWhitespace()
                if try closes(closing) { return }
                try expect(UInt8(ascii: ","))
                index += 1
                skipWhitespace()
            }
        }

        /// Whether the container ends here (then it is left); throws at the end of the text.
        private mutating func closes(_ closing: UInt8) throws(Failure) -> Bool {
            guard index < bytes.count else { throw .endOfFile }
            guard bytes[index] == closing else { return false }
            index += 1
            depth -= 1
            return true
        }

        /// Throws unless `byte` is next.
        private func expect(_ byte: UInt8) throws(Failure) {
            guard index < bytes.count else { throw .endOfFile }
            guard bytes[index] == byte else { throw .unexpected(at: index) }
        }

        private mutating func string() throws(Failure) {
            index += 1
            let start = index
            while true {
                guard index < bytes.count else { throw .endOfFile }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { throw Failure(description: "Unescaped control character around character \(index).") }
                if byte == UInt8(ascii: "\\") {
                    try escape()
                } else {
                    index += 1
                }
            }
            let content = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1
            if String(validating: content, as: UTF8.self) == nil {
                throw Failure(
                    description: "Invalid UTF-8 sequence \(content.count) bytes starting from character \(start).")
            }
        }

        private mutating func escape() throws(Failure) {
            let start = index
            index += 1
            guard index < bytes.count else { throw .endOfFile }
            let letter = bytes[index]
            index += 1
            guard letter == UInt8(ascii: "u") else {
                guard Array("\"\\/bfnrt".utf8).contains(letter) else {
                    throw Failure(description: "Invalid escape sequence around character \(start).")
                }
                return
            }
            let unit = try hexUnit(at: start)
            guard (0xD800...0xDBFF).contains(unit) else {
                if (0xDC00...0xDFFF).contains(unit) {
                    throw Failure(
                        description:
                            "Unable to convert hex escape sequence (no high character) to UTF8-encoded character at position \(start)."
                    )
                }
                return
            }
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw Failure(
                    description:
                        "Unexpected end of file during string parse (expected low-surrogate code point but did not find one)."
                )
            }
            index += 2
            guard (0xDC00...0xDFFF).contains(try hexUnit(at: start)) else {
                throw Failure(
                    description:
                        "Unable to convert hex escape sequence (no high character) to UTF8-encoded character at position \(start)."
                )
            }
        }

        /// The four hex digits at `index`, as one UTF-16 code unit.
        private mutating func hexUnit(at start: Int) throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw .endOfFile }
            var unit: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Character(UnicodeScalar(bytes[index])).hexDigitValue else {
                    throw Failure(description: "Invalid hex encoded sequence around character \(start).")
                }
                unit = unit << 4 | UInt32(digit)
                index += 1
            }
            return unit
        }

        private mutating func number() throws(Failure) {
            let start = index
            func digits(_ parser: inout Parser) -> Int {
                let first = parser.index
                while parser.index < parser.bytes.count, (0x30...0x39).contains(parser.bytes[parser.index]) {
                    parser.index += 1
                }
                return parser.index - first
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let leading = index
            guard digits(&self) > 0 else { throw index < bytes.count ? .unexpected(at: index) : .endOfFile }
            if bytes[leading] == UInt8(ascii: "0"), index - leading > 1 {
                throw Failure(description: "Number with leading zero around character \(leading).")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw index < bytes.count ? .unexpected(at: index) : .endOfFile }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits(&self) > 0 else { throw index < bytes.count ? .unexpected(at: index) : .endOfFile }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if let number = Double(text), !number.isFinite {
                throw Failure(description: "Number \(text) is not representable in Swift.")
            }
        }
    }
}
