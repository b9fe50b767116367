import FoundationEssentials
import LiveActivity
import Glibc

/// The fast path of ``WireCodec/decode(_:from:)``: a strict JSON parser and a `Decoder` over its
/// result, for the payloads that are well formed, which are nearly all of them.
///
/// `JSONDecoder` spends about 35 µs on an activity envelope, most of it building a key table for
/// every keyed container and looking up generic metadata; a board ingesting 20,000 envelopes a
/// second cannot afford that. This decoder parses the payload once into a flat array of nodes and
/// finds keys by comparing bytes, running the very same `init(from:)` (so every check of the wire
/// contract applies unchanged).
///
/// It never decides that a payload is invalid: anything it does not take as certainly valid (a
/// syntax error, invalid UTF-8, a duplicate or escaped key, a number out of range, deep nesting, a
/// check that fails) makes it return nil, and the caller decodes with `JSONDecoder`, whose error
/// names the problem. What it accepts, `JSONDecoder` accepts with the same values: a test compares
/// both on every sample and hostile payload.
enum WireJSON {
    /// The payload decoded, or nil when `JSONDecoder` must decide.
    static func decode<Payload: Decodable>(_ type: Payload.Type, from bytes: [UInt8]) -> Payload? {
        guard let document = Document(bytes) else { return nil }
        if let payload = decodeDirectly(type, from: document) { return payload }
        return try? Payload(from: NodeDecoder(document: document, node: 0))
    }

    /// Any failure of the fast path; its details do not matter, `JSONDecoder` gives them.
    struct Fallback: Error {}

    /// A parsed JSON text: every value is a node, in document order; a container's children
    /// follow it (an object's as key, value, key, value).
    final class Document {
        enum Kind: UInt8 {
            case null, `false`, `true`, number, string, array, object
        }

        struct Node {
            var kind: Kind
            /// The value's bytes (a string's without its quotes).
            var start: Int
            var end: Int
            /// This node and its descendants.
            var size = 1
            /// A string with a backslash escape, or a number with a fraction or an exponent.
            var isComplex = false
            /// An object's keys as a Bloom filter of ``Document/keyBit(_:)``s: a key whose bit is not
            /// set is not there, which spares the search for the optional keys a payload leaves out.
            var keys: UInt64 = 0
        }

        /// A key's bit in its object's ``Node/keys``, from its length and its first and last bytes.
        static func keyBit(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
            let mix = key.count &* 7 &+ Int(key.first ?? 0) &+ Int(key.last ?? 0) &* 3
            return 1 << UInt64(mix & 63)
        }

        /// The deepest nesting parsed; deeper documents go to `JSONDecoder`.
        static let maximumDepth = 32

        /// The payload's bytes and its nodes, in memory the document owns: a decode reads them a few
        /// hundred times, and through arrays every read retained and released their storage.
        let bytes: UnsafeBufferPointer<UInt8>
        let nodes: UnsafeBufferPointer<Node>

        /// Parses `payload`; nil unless it is one well-formed JSON value in valid UTF-8 with no
        /// duplicate or escaped object keys.
        init?(_ payload: [UInt8]) {
            let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: payload.count)
            _ = bytes.initialize(from: payload)
            var parser = Parser(bytes: UnsafeBufferPointer(bytes))
            let parsed = (try? parser.parseValue(depth: 0)) != nil
            parser.skipSpace()
            guard parsed, parser.position == bytes.count else {
                bytes.deallocate()
                parser.nodes.deallocate()
                return nil
            }
            self.bytes = UnsafeBufferPointer(bytes)
            self.nodes = parser.nodes.buffer
        }

        deinit {
            bytes.deallocate()
            nodes.deallocate()
        }

        /// The nodes a parser appends, in memory it owns until a document takes it.
        private struct NodeList {
            private var base = UnsafeMutablePointer<Node>.allocate(capacity: 48)
            private var capacity = 48
            private(set) var count = 0

            var buffer: UnsafeBufferPointer<Node> { UnsafeBufferPointer(start: base, count: count) }

            mutating func append(_ node: Node) {
                if count == capacity {
                    let grown = UnsafeMutablePointer<Node>.allocate(capacity: capacity * 2)
                    grown.moveInitialize(from: base, count: count)
                    base.deallocate()
                    (base, capacity) = (grown, capacity * 2)
                }
                (base + count).initialize(to: node)
                count += 1
            }

            subscript(index: Int) -> Node {
                get { base[index] }
                nonmutating set { base[index] = newValue }
            }

            func deallocate() {
                base.deallocate()
            }
        }

        /// Reads the bytes once, front to back, into nodes.
        private struct Parser {
            let bytes: UnsafeBufferPointer<UInt8>
            var position = 0
            var nodes = NodeList()

            init(bytes: UnsafeBufferPointer<UInt8>) {
                self.bytes = bytes
            }

            private var atEnd: Bool { position >= bytes.count }

            mutating func skipSpace() {
                while position < bytes.count {
                    switch bytes[position] {
                    case 0x20, 0x09, 0x0A, 0x0D: position += 1
                    default: return
                    }
                }
            }

            mutating func parseValue(depth: Int) throws(Fallback) {
                skipSpace()
                guard !atEnd, depth <= Document.maximumDepth else { throw Fallback() }
                switch bytes[position] {
                case UInt8(ascii: "{"): try parseObject(depth: depth)
                case UInt8(ascii: "["): try parseArray(depth: depth)
                case UInt8(ascii: "\""): try parseString()
                case UInt8(ascii: "t"): try parseLiteral("true", .true)
                case UInt8(ascii: "f"): try parseLiteral("false", .false)
                case UInt8(ascii: "n"): try parseLiteral("null", .null)
                default: try parseNumber()
                }
            }

            private mutating func parseLiteral(_ literal: StaticString, _ kind: Kind) throws(Fallback) {
                let count = literal.utf8CodeUnitCount
                guard position + count <= bytes.count,
                    memcmp(bytes.baseAddress! + position, literal.utf8Start, count) == 0
                else { throw Fallback() }
                nodes.append(Node(kind: kind, start: position, end: position + count))
                position += count
            }

            private mutating func digits() -> Int {
                let first = position
                while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
                return position - first
            }

            /// `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`, as RFC 8259 says.
            private mutating func parseNumber() throws(Fallback) {
                let start = position
                var complex = false
                if bytes[position] == UInt8(ascii: "-") { position += 1 }
                guard !atEnd else { throw Fallback() }
                if bytes[position] == UInt8(ascii: "0") {
                    position += 1
                } else if digits() == 0 {
                    throw Fallback()
                }
                if !atEnd, bytes[position] == UInt8(ascii: ".") {
                    position += 1
                    complex = true
                    guard digits() > 0 else { throw Fallback() }
                }
                if !atEnd, bytes[position] | 0x20 == UInt8(ascii: "e") {
                    position += 1
                    complex = true
                    if !atEnd, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                        position += 1
                    }
                    guard digits() > 0 else { throw Fallback() }
                }
                nodes.append(Node(kind: .number, start: start, end: position, isComplex: complex))
            }

            /// Moves past printable ASCII other than `"` and `\\`: nearly all of a string, in a tight loop.
            private mutating func skipPlainCharacters() {
                var position = self.position
                while position < bytes.count {
                    let byte = bytes[position]
                    guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else {
                        break
                    }
                    position += 1
                }
                self.position = position
            }

            private mutating func parseString() throws(Fallback) {
                position += 1
                let start = position
                var escaped = false
                var ascii = true
                while true {
                    skipPlainCharacters()
                    guard !atEnd else { throw Fallback() }
                    let byte = bytes[position]
                    if byte == UInt8(ascii: "\"") { break }
                    guard byte >= 0x20 else { throw Fallback() }
                    if byte >= 0x80 { ascii = false }
                    if byte == UInt8(ascii: "\\") {
                        escaped = true
                        position += 1
                        guard !atEnd else { throw Fallback() }
                        switch bytes[position] {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                            UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                            break
                        case UInt8(ascii: "u"):
                            // Checked when decoded: surrogates must pair there.
                            guard position + 4 < bytes.count,
                                Document.hexValue(UnsafeBufferPointer(rebasing: bytes[(position + 1)...(position + 4)]))
                                    != nil
                            else { throw Fallback() }
                            position += 4
                        default:
                            throw Fallback()
                        }
                    }
                    position += 1
                }
                // Strings are the only place for bytes beyond ASCII; JSONDecoder judges invalid UTF-8.
                if !ascii,
                    String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self) == nil
                {
                    throw Fallback()
                }
                nodes.append(Node(kind: .string, start: start, end: position, isComplex: escaped))
                position += 1
            }

            private mutating func parseArray(depth: Int) throws(Fallback) {
                let index = nodes.count
                nodes.append(Node(kind: .array, start: position, end: position))
                position += 1
                skipSpace()
                if !atEnd, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                } else {
                    while true {
                        try parseValue(depth: depth + 1)
                        skipSpace()
                        guard !atEnd else { throw Fallback() }
                        position += 1
                        if bytes[position - 1] == UInt8(ascii: "]") { break }
                        guard bytes[position - 1] == UInt8(ascii: ",") else { throw Fallback() }
                    }
                }
                nodes[index].end = position
                nodes[index].size = nodes.count - index
            }

            private mutating func parseObject(depth: Int) throws(Fallback) {
                let index = nodes.count
                nodes.append(Node(kind: .object, start: position, end: position))
                position += 1
                skipSpace()
                var firstKey: Int?
                if !atEnd, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                } else {
                    while true {
                        skipSpace()
                        guard !atEnd, bytes[position] == UInt8(ascii: "\"") else { throw Fallback() }
                        try parseString()
                        let key = nodes.count - 1
                        // JSONDecoder decides what escaped and repeated keys mean. A key whose bit is not
                        // set yet repeats none; only the others are compared with the keys before them.
                        let bit = Document.keyBit(
                            UnsafeBufferPointer(rebasing: bytes[nodes[key].start..<nodes[key].end]))
                        guard !nodes[key].isComplex,
                            nodes[index].keys & bit == 0 || !isRepeated(key, after: firstKey ?? key)
                        else { throw Fallback() }
                        nodes[index].keys |= bit
                        firstKey = firstKey ?? key
                        skipSpace()
                        guard !atEnd, bytes[position] == UInt8(ascii: ":") else { throw Fallback() }
                        position += 1
                        try parseValue(depth: depth + 1)
                        skipSpace()
                        guard !atEnd else { throw Fallback() }
                        position += 1
                        if bytes[position - 1] == UInt8(ascii: "}") { break }
                        guard bytes[position - 1] == UInt8(ascii: ",") else { throw Fallback() }
                    }
                }
                nodes[index].end = position
                nodes[index].size = nodes.count - index
            }

            /// Whether the key at `key` repeats one of the keys of its object from `first` on.
            private func isRepeated(_ key: Int, after first: Int) -> Bool {
                var other = first
                while other < key {
                    if Document.equal(bytes, nodes[other], nodes[key]) { return true }
                    other += 1 + nodes[other + 1].size
                }
                return false
            }
        }

        private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Node, _ b: Node) -> Bool {
            a.end - a.start == b.end - b.start
                && same(bytes.baseAddress! + a.start, UnsafeBufferPointer(rebasing: bytes[b.start..<b.end]))
        }

        /// Whether the bytes at `text` are `expected`; keys are short, and a loop beats a call to memcmp.
        private static func same(_ text: UnsafePointer<UInt8>, _ expected: UnsafeBufferPointer<UInt8>) -> Bool {
            for index in expected.indices where text[index] != expected[index] { return false }
            return true
        }

        /// The value of the member `name` of the object at `object`, if it has that key.
        ///
        /// The search starts at the key node `hint` (the object's first key by default) and wraps
        /// around: a reader that reads the keys in the order the payload has them finds each at once.
        func member(_ name: String, of object: Int, from hint: Int? = nil) -> Int? {
            var name = name
            return name.withUTF8 { expected in
                guard nodes[object].keys & Self.keyBit(expected) != 0 else { return nil }
                let (first, end) = (object + 1, object + nodes[object].size)
                let start = hint.map { $0 < end ? $0 : first } ?? first
                var child = start
                repeat {
                    let key = nodes[child]
                    if key.end - key.start == expected.count, Self.same(bytes.baseAddress! + key.start, expected) {
                        return child + 1
                    }
                    child += 1 + nodes[child + 1].size
                    if child == end { child = first }
                } while child != start
                return nil
            }
        }

        /// The keys of the object at `object`.
        func keys(of object: Int) -> [String] {
            var keys: [String] = []
            var child = object + 1
            while child < object + nodes[object].size {
                keys.append(String(decoding: bytes[nodes[child].start..<nodes[child].end], as: UTF8.self))
                child += 1 + nodes[child + 1].size
            }
            return keys
        }

        func string(_ index: Int) throws(Fallback) -> String {
            let node = nodes[index]
            guard node.kind == .string else { throw Fallback() }
            guard node.isComplex else { return String(decoding: bytes[node.start..<node.end], as: UTF8.self) }
            var scalars = String.UnicodeScalarView()
            var utf8: [UInt8] = []
            var position = node.start
            func flush() {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll(keepingCapacity: true)
            }
            while position < node.end {
                let byte = bytes[position]
                guard byte == UInt8(ascii: "\\") else {
                    utf8.append(byte)
                    position += 1
                    continue
                }
                flush()
                let escape = bytes[position + 1]
                position += 2
                switch escape {
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard var value = Self.hexValue(UnsafeBufferPointer(rebasing: bytes[position..<(position + 4)]))
                    else { throw Fallback() }
                    position += 4
                    if (0xD800...0xDBFF).contains(value) {
                        // A high surrogate must be followed by an escaped low one.
                        guard position + 6 <= node.end, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u"),
                            let low = Self.hexValue(
                                UnsafeBufferPointer(rebasing: bytes[(position + 2)..<(position + 6)])),
                            (0xDC00...0xDFFF).contains(low)
                        else { throw Fallback() }
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                        position += 6
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw Fallback() }
                    scalars.append(scalar)
                default:
                    scalars.append(Unicode.Scalar(escape))
                }
            }
            flush()
            return String(scalars)
        }

        func double(_ index: Int) throws(Fallback) -> Double {
            let node = nodes[index]
            guard node.kind == .number else { throw Fallback() }
            if let value = exactDouble(node) { return value }
            let text = bytes[node.start..<node.end]
            guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { throw Fallback() }
            // An underflow to zero (1e-400) is JSONDecoder's to judge.
            if value == 0,
                text.prefix(while: { $0 | 0x20 != UInt8(ascii: "e") }).contains(where: { (0x31...0x39).contains($0) })
            {
                throw Fallback()
            }
            return value
        }

        /// Exact powers of ten as doubles, 1e0 to 1e22 (10^22 < 2^53 x 2^22: every one is exact).
        private static let powersOfTen: [Double] = (0...22).map { Double("1e\($0)")! }

        /// A number's value by Clinger's fast path: when its decimal significand has at most 19 digits
        /// and is at most 2^53, and its power of ten is within ±22, both are exact doubles and one
        /// multiplication or division rounds correctly, as `strtod` (and so `JSONDecoder`) does. Nearly
        /// every number on the wire qualifies (`1700000060.123`, `52.520008`); nil for the others, which
        /// `strtod` reads. Parsing through a `String` cost about 600 instructions a number.
        func exactDouble(_ node: Node) -> Double? {
            var position = node.start
            let negative = bytes[position] == UInt8(ascii: "-")
            if negative { position += 1 }
            var significand: UInt64 = 0
            var digits = 0
            var exponent = 0
            var fraction = false
            // The grammar was checked when parsed: digits, an optional fraction, an optional exponent.
            while position < node.end {
                let byte = bytes[position]
                if byte == UInt8(ascii: ".") {
                    fraction = true
                } else if byte | 0x20 == UInt8(ascii: "e") {
                    break
                } else {
                    significand = significand &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                    if significand != 0 { digits += 1 }
                    if fraction { exponent -= 1 }
                    guard digits <= 19 else { return nil }
                }
                position += 1
            }
            if position < node.end {
                position += 1
                let sign = bytes[position] == UInt8(ascii: "-") ? -1 : 1
                if bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") { position += 1 }
                guard node.end - position <= 4 else { return nil }
                var value = 0
                while position < node.end {
                    value = value * 10 + Int(bytes[position] &- UInt8(ascii: "0"))
                    position += 1
                }
                exponent += sign * value
            }
            guard significand <= 1 << 53 else { return nil }
            var value = Double(significand)
            if significand != 0 {
                guard (-22...22).contains(exponent) else { return nil }
                value = exponent < 0 ? value / Self.powersOfTen[-exponent] : value * Self.powersOfTen[exponent]
            }
            return negative ? -value : value
        }

        func integer<Value: FixedWidthInteger>(_ index: Int) throws(Fallback) -> Value {
            let node = nodes[index]
            guard node.kind == .number, !node.isComplex,
                let value = Value(String(decoding: bytes[node.start..<node.end], as: UTF8.self), radix: 10)
            else { throw Fallback() }
            return value
        }

        func bool(_ index: Int) throws(Fallback) -> Bool {
            switch nodes[index].kind {
            case .true: true
            case .false: false
            default: throw Fallback()
            }
        }

        fileprivate static func hexValue(_ digits: UnsafeBufferPointer<UInt8>) -> UInt32? {
            var value: UInt32 = 0
            for digit in digits {
                guard let nibble = UInt32(String(UnicodeScalar(digit)), radix: 16) else { return nil }
                value = value << 4 | nibble
            }
            return value
        }
    }

    /// A `Decoder` at one node of a document.
    struct NodeDecoder: Decoder {
        let document: Document
        let node: Int
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard document.nodes[node].kind == .object else { throw Fallback() }
            return KeyedDecodingContainer(KeyedContainer<Key>(document: document, object: node))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Fallback() }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(decoder: self) }

        /// A value of `type` at `node`: dates are seconds since 1970, as `WireCodec` writes them.
        static func decode<T: Decodable>(_ type: T.Type, document: Document, node: Int) throws -> T {
            if T.self == Date.self, let date = Date(timeIntervalSince1970: try document.double(node)) as? T {
                return date
            }
            return try T(from: NodeDecoder(document: document, node: node))
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let document: Document
        let object: Int
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { document.keys(of: object).compactMap(Key.init(stringValue:)) }

        func contains(_ key: Key) -> Bool { document.member(key.stringValue, of: object) != nil }

        private func value(_ key: Key) throws(Fallback) -> Int {
            guard let value = document.member(key.stringValue, of: object) else { throw Fallback() }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { document.nodes[try value(key)].kind == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try document.bool(value(key)) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try document.string(value(key)) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try document.double(value(key)) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw Fallback() }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try document.integer(value(key)) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try document.integer(value(key)) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try document.integer(value(key)) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try document.integer(value(key)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try document.integer(value(key)) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try document.integer(value(key)) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try document.integer(value(key)) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try document.integer(value(key)) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try document.integer(value(key)) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try document.integer(value(key)) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try NodeDecoder.decode(type, document: document, node: value(key))
        }

        /// The value of `key` unless it is absent or null: one lookup, where the protocol's default
        /// `decodeIfPresent` makes three.
        private func present(_ key: Key) -> Int? {
            guard let value = document.member(key.stringValue, of: object), document.nodes[value].kind != .null else {
                return nil
            }
            return value
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try present(key).map { try document.bool($0) }
        }

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try present(key).map { try document.string($0) }
        }

        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try present(key).map { try document.double($0) }
        }

        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try present(key).map { try document.integer($0) }
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try present(key).map { try NodeDecoder.decode(type, document: document, node: $0) }
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try NodeDecoder(document: document, node: value(key)).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw Fallback() }
        func superDecoder() throws -> any Decoder { throw Fallback() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Fallback() }
    }

    struct SingleValue: SingleValueDecodingContainer {
        let decoder: NodeDecoder
        var codingPath: [any CodingKey] { [] }
        private var document: Document { decoder.document }
        private var node: Int { decoder.node }

        func decodeNil() -> Bool { document.nodes[node].kind == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try document.bool(node) }
        func decode(_ type: String.Type) throws -> String { try document.string(node) }
        func decode(_ type: Double.Type) throws -> Double { try document.double(node) }
        func decode(_ type: Float.Type) throws -> Float { throw Fallback() }
        func decode(_ type: Int.Type) throws -> Int { try document.integer(node) }
        func decode(_ type: Int8.Type) throws -> Int8 { try document.integer(node) }
        func decode(_ type: Int16.Type) throws -> Int16 { try document.integer(node) }
        func decode(_ type: Int32.Type) throws -> Int32 { try document.integer(node) }
        func decode(_ type: Int64.Type) throws -> Int64 { try document.integer(node) }
        func decode(_ type: UInt.Type) throws -> UInt { try document.integer(node) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try document.integer(node) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try document.integer(node) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try document.integer(node) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try document.integer(node) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try NodeDecoder.decode(type, document: document, node: node)
        }
    }
}
