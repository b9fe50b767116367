/// A small, strict reader for gpsd's JSON lines: one object per line, whose members the caller
/// visits without building a dictionary. Nested objects and arrays are checked for balance and
/// handed over as byte ranges (SKY's satellites, DEVICES' devices) for a nested scan.
///
/// Allocation-free; any deviation from JSON (a bare word, a missing quote, trailing text) makes
/// the whole line invalid.
struct GpsdJSONScanner {
    /// One member value: where it is in the line.
    enum Value {
        /// A string; `range` excludes the quotes; `escaped` says it contains backslash escapes.
        case string(range: Range<Int>, escaped: Bool)
        /// A number, unparsed.
        case number(Range<Int>)
        case bool(Bool)
        case null
        /// A nested object, braces included.
        case object(Range<Int>)
        /// An array, brackets included.
        case array(Range<Int>)
    }

    let bytes: UnsafeBufferPointer<UInt8>

    /// Visits every member of the object spanning `range` (white space around it allowed).
    /// Returns `false`, possibly after visiting some members, when the text is not a JSON object.
    func forEachMember(in range: Range<Int>, _ body: (Range<Int>, Value) -> Void) -> Bool {
        scanMembers(in: range) { key, value -> Bool in
            body(key, value)
            return true
        } == .complete
    }

    /// How a scan of an object's members ended.
    enum Scan: Equatable {
        /// The whole object was read, and it is one.
        case complete
        /// The visitor stopped it: the text up to there is well-formed, the rest was not read.
        case stopped
        /// The text is not a JSON object.
        case malformed
    }

    /// Visits the members of the object spanning `range` while `body` returns true.
    func scanMembers(in range: Range<Int>, while body: (Range<Int>, Value) -> Bool) -> Scan {
        scan(in: range, body) ?? .malformed
    }

    private func scan(in range: Range<Int>, _ body: (Range<Int>, Value) -> Bool) -> Scan? {
        var index = skipSpace(range.lowerBound, range.upperBound)
        guard index < range.upperBound, bytes[index] == UInt8(ascii: "{") else { return nil }
        index = skipSpace(index + 1, range.upperBound)
        let end = range.upperBound
        if index < end, bytes[index] == UInt8(ascii: "}") {
            return skipSpace(index + 1, end) == end ? .complete : nil
        }
        while true {
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
            guard let (key, _, afterKey) = scanString(index, end) else { return nil }
            index = skipSpace(afterKey, end)
            guard index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
            index = skipSpace(index + 1, end)
            guard let (value, afterValue) = scanValue(index, end) else { return nil }
            guard body(key, value) else { return .stopped }
            index = skipSpace(afterValue, end)
            guard index < end else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index = skipSpace(index + 1, end)
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            return skipSpace(index + 1, end) == end ? .complete : nil
        }
    }

    /// Visits every element of the array spanning `range` (brackets included).
    func forEachElement(in range: Range<Int>, _ body: (Value) -> Void) -> Bool {
        var index = skipSpace(range.lowerBound, range.upperBound)
        let end = range.upperBound
        guard index < end, bytes[index] == UInt8(ascii: "[") else { return false }
        index = skipSpace(index + 1, end)
        if index < end, bytes[index] == UInt8(ascii: "]") { return skipSpace(index + 1, end) == end }
        while true {
            guard let (value, after) = scanValue(index, end) else { return false }
            body(value)
            index = skipSpace(after, end)
            guard index < end else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index = skipSpace(index + 1, end)
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { return false }
            return skipSpace(index + 1, end) == end
        }
    }

    /// Whether the key at `range` is `name`.
    func key(_ range: Range<Int>, is name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let pointer = name.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != pointer[offset] { return false }
        return true
    }

    /// The string value, unescaped.
    func string(_ range: Range<Int>, escaped: Bool) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
                output.append(byte)
                index += 1
                continue
            }
            let escape = raw[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "u"):
                var scalar: UInt32 = 0
                var digits = 0
                while digits < 4, index < raw.count, let value = DecimalParsing.hexDigit(raw[index]) {
                    scalar = scalar << 4 | UInt32(value)
                    digits += 1
                    index += 1
                }
                output.append(contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "?").utf8))
            default: output.append(escape)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private func skipSpace(_ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end {
            let byte = bytes[index]
            guard byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A else { break }
            index += 1
        }
        return index
    }

    /// Scans a string starting at its opening quote: its content range, whether it has escapes,
    /// and the index after the closing quote.
    private func scanString(_ start: Int, _ end: Int) -> (Range<Int>, Bool, Int)? {
        var index = start + 1
        var escaped = false
        while index < end {
            let byte = bytes[index]
            // Most bytes are none of the three that matter (a quote 0x22, a backslash 0x5C, a
            // control byte): one test each (SKY's satellites are most of the bytes gpsd sends).
            if byte > 0x22 && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") { return (start + 1..<index, escaped, index + 1) }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 1
                guard index < end else { return nil }
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"), UInt8(ascii: "u"):
                    break
                default: return nil
                }
            }
            index += 1
        }
        return nil
    }

    private func scanValue(_ start: Int, _ end: Int) -> (Value, Int)? {
        guard start < end else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            guard let (range, escaped, after) = scanString(start, end) else { return nil }
            return (.string(range: range, escaped: escaped), after)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            var index = start + 1
            var sawDigit = bytes[start] != UInt8(ascii: "-")
            while index < end {
                let byte = bytes[index]
                if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    sawDigit = true
                } else if !(byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-"))
                {
                    break
                }
                index += 1
            }
            guard sawDigit else { return nil }
            return (.number(start..<index), index)
        case UInt8(ascii: "t"): return literal("true", start, end).map { (.bool(true), $0) }
        case UInt8(ascii: "f"): return literal("false", start, end).map { (.bool(false), $0) }
        case UInt8(ascii: "n"): return literal("null", start, end).map { (.null, $0) }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard let after = skipNested(start, end) else { return nil }
            return (bytes[start] == UInt8(ascii: "{") ? .object(start..<after) : .array(start..<after), after)
        default:
            return nil
        }
    }

    private func literal(_ word: StaticString, _ start: Int, _ end: Int) -> Int? {
        let count = word.utf8CodeUnitCount
        guard start + count <= end, key(start..<start + count, is: word) else { return nil }
        return start + count
    }

    /// Skips a nested object or array, minding strings; the index after its closing bracket.
    private func skipNested(_ start: Int, _ end: Int) -> Int? {
        var depth = 0
        var index = start
        while index < end {
            let byte = bytes[index]
            // `[` and `{`, `]` and `}` differ in bit 5 alone: one test for each pair.
            let folded = byte | 0x20
            if folded == UInt8(ascii: "{") {
                depth += 1
            } else if folded == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 { return index + 1 }
                if depth < 0 { return nil }
            } else if byte == UInt8(ascii: "\"") {
                guard let (_, _, after) = scanString(index, end) else { return nil }
                index = after
                continue
            }
            index += 1
        }
        return nil
    }
}
