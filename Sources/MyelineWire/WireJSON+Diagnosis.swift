import FoundationEssentials

extension WireJSON {
    /// What is wrong with a payload's JSON, for the slow path of ``WireCodec``, in one pass.
    ///
    /// It says why a text is not JSON, in the words of Foundation's `JSONSerialization` (`Invalid
    /// value around character 7.`), which `JSONDecoder` does not say ("The given data was not valid
    /// JSON."; FoundationEssentials has no `JSONSerialization`, and importing Foundation for it would
    /// link ICU into the agent, issue 24). And it finds what `JSONDecoder` lets pass: an object with
    /// the same key twice (the decoder keeps the first, JavaScript and Python the last, so receivers
    /// would disagree) and a trailing comma.
    ///
    /// The rules are `JSONSerialization`'s: a value at the top (fragments allowed), strings of valid
    /// UTF-8 with valid escapes, numbers that a `Double` holds; a trailing comma is noted and passed
    /// over. One rule is Myeline's: at most ``WireCodec/maximumNesting`` arrays and objects inside each
    /// other (64, where `JSONSerialization` allows 512), the limit that ``WireCodec`` applies before
    /// `JSONDecoder` reads a payload. Only the explanation comes from here; what is accepted is
    /// still the decoder's.
    enum Diagnosis {
        /// How deep arrays and objects may nest: ``WireCodec/maximumNesting``.
        static let maximumDepth = WireCodec.maximumNesting

        /// What was found: the first syntax error, else the first duplicate key or trailing comma.
        enum Finding: Equatable, CustomStringConvertible {
            /// Not JSON, explained as `JSONSerialization` does.
            case syntax(String)
            /// The key, as a dotted path from the top, appears twice in one object.
            case duplicateKey(String)
            /// A comma right before a closing brace or bracket, at this byte offset.
            case trailingComma(Int)

            /// Whether the text is not JSON at all.
            var isSyntax: Bool {
                if case .syntax = self { true } else { false }
            }

            /// Whether it is a key found twice.
            var isDuplicateKey: Bool {
                if case .duplicateKey = self { true } else { false }
            }

            var description: String {
                switch self {
                case .syntax(let explanation): "not valid JSON: \(explanation)"
                case .duplicateKey(let path): "duplicate key '\(path)'"
                case .trailingComma(let offset): "not valid JSON: a trailing comma at byte \(offset)"
                }
            }
        }

        /// The first finding in `data`, or nil when it is JSON without duplicate keys or trailing commas.
        static func finding(in data: Data) -> Finding? {
            data.withUnsafeBytes { raw -> Finding? in
                var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
                do throws(Failure) {
                    try parser.document()
                    return parser.shape
                } catch {
                    return .syntax(error.description)
                }
            }
        }
    }
}

extension WireJSON.Diagnosis {
    fileprivate struct Failure: Error, CustomStringConvertible {
        let description: String

        static func unexpected(at index: Int) -> Failure {
            Failure(description: "Invalid value around character \(index).")
        }
        static let endOfFile = Failure(description: "Unexpected end of file during JSON parse.")
    }

    fileprivate struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// The keys of each open object, and the key whose value is being read: the path of a duplicate.
        var objects: [(keys: Set<String>, key: String?)] = []
        /// The first duplicate key or trailing comma.
        var shape: Finding?

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func document() throws(Failure) {
            skipWhitespace()
            try value(depth: 0)
            skipWhitespace()
            if index < bytes.count { throw .unexpected(at: index) }
        }

        private mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        private mutating func value(depth: Int) throws(Failure) {
            guard index < bytes.count else { throw .endOfFile }
            switch bytes[index] {
            case UInt8(ascii: "\""): _ = try string(decoding: false)
            case UInt8(ascii: "{"): try container(closing: UInt8(ascii: "}"), keyed: true, depth: depth + 1)
            case UInt8(ascii: "["): try container(closing: UInt8(ascii: "]"), keyed: false, depth: depth + 1)
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

        private mutating func container(closing: UInt8, keyed: Bool, depth: Int) throws(Failure) {
            guard depth <= WireJSON.Diagnosis.maximumDepth else {
                throw Failure(description: "Too many nested arrays or dictionaries around character \(index + 1).")
            }
            if keyed { objects.append(([], nil)) }
            defer { if keyed { objects.removeLast() } }
            index += 1
            skipWhitespace()
            if try closes(closing) { return }
            while true {
                if keyed {
                    try expect(UInt8(ascii: "\""))
                    let key = try string(decoding: true)
                    note(key: key)
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    index += 1
                    skipWhitespace()
                }
                try value(depth: depth)
                skipWhitespace()
                if try closes(closing) { return }
                try expect(UInt8(ascii: ","))
                let comma = index
                index += 1
                skipWhitespace()
                if try closes(closing) {
                    if shape == nil { shape = .trailingComma(comma) }
                    return
                }
            }
        }

        /// Records the key just read in the innermost object; the first one seen twice is the finding.
        private mutating func note(key: String?) {
            guard let key else { return }
            let top = objects.count - 1
            if !objects[top].keys.insert(key).inserted, shape == nil {
                shape = .duplicateKey((objects.dropLast().compactMap(\.key) + [key]).joined(separator: "."))
            }
            objects[top].key = key
        }

        /// Whether the container ends here (then it is left); throws at the end of the text.
        private mutating func closes(_ closing: UInt8) throws(Failure) -> Bool {
            guard index < bytes.count else { throw .endOfFile }
            guard bytes[index] == closing else { return false }
            index += 1
            return true
        }

        /// Throws unless `byte` is next.
        private func expect(_ byte: UInt8) throws(Failure) {
            guard index < bytes.count else { throw .endOfFile }
            guard bytes[index] == byte else { throw .unexpected(at: index) }
        }

        /// Reads the string that opens here; with `decoding`, returns its text, escapes resolved.
        private mutating func string(decoding: Bool) throws(Failure) -> String? {
            index += 1
            let start = index
            var scalars = decoding ? String.UnicodeScalarView() : nil
            var plainStart = index
            func flush(_ parser: Parser, upTo end: Int) {
                guard scalars != nil, end > plainStart else { return }
                let plain = UnsafeBufferPointer(rebasing: parser.bytes[plainStart..<end])
                scalars?.append(contentsOf: String(decoding: plain, as: UTF8.self).unicodeScalars)
            }
            while true {
                guard index < bytes.count else { throw .endOfFile }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { throw Failure(description: "Unescaped control character around character \(index).") }
                if byte == UInt8(ascii: "\\") {
                    flush(self, upTo: index)
                    let scalar = try escape()
                    scalars?.append(scalar)
                    plainStart = index
                } else {
                    index += 1
                }
            }
            let content = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if String(validating: content, as: UTF8.self) == nil {
                throw Failure(
                    description: "Invalid UTF-8 sequence \(content.count) bytes starting from character \(start).")
            }
            flush(self, upTo: index)
            index += 1
            return scalars.map(String.init)
        }

        /// Reads the escape that starts here and returns the character it stands for.
        private mutating func escape() throws(Failure) -> Unicode.Scalar {
            let start = index
            index += 1
            guard index < bytes.count else { throw .endOfFile }
            let letter = bytes[index]
            index += 1
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(letter)
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"): break
            default: throw Failure(description: "Invalid escape sequence around character \(start).")
            }
            let noHighCharacter = Failure(
                description:
                    "Unable to convert hex escape sequence (no high character) to UTF8-encoded character at position \(start)."
            )
            let unit = try hexUnit(at: start)
            guard (0xD800...0xDBFF).contains(unit) else {
                guard let scalar = Unicode.Scalar(unit) else { throw noHighCharacter }
                return scalar
            }
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw Failure(
                    description:
                        "Unexpected end of file during string parse (expected low-surrogate code point but did not find one)."
                )
            }
            index += 2
            let low = try hexUnit(at: start)
            guard (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            else { throw noHighCharacter }
            return scalar
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
