import FoundationEssentials
import LiveActivity

/// A wire type that reads itself from a parsed ``WireJSON/Document`` without Codable: the payloads a
/// board receives by the thousand a second (activity envelopes of `location` activities, statuses)
/// and their parts.
///
/// Codable over ``WireJSON`` still cost about 60,000 instructions an envelope (callgrind): an
/// existential box for every keyed container, a generic metadata lookup and a dynamic dispatch for
/// every key. A type's `init(json:at:)` reads the same keys with the same ``ValueRule``s as its
/// `init(from:)`, written beside it line for line; it may refuse more (throwing ``WireJSON/Fallback``
/// hands the payload to `init(from:)`), never less, and never gives another value.
/// `WireJSONDirectTests` and the `FuzzEnvelope` target check that against `JSONDecoder`.
protocol WireJSONDecodable: Decodable {
    /// Reads the value at `node` of `document`.
    /// - Throws: ``WireJSON/Fallback`` for anything `init(from:)` should judge.
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback)
}

extension WireJSON {
    /// The payload read by `Payload`'s direct reader; nil when it has none or the reader falls back.
    static func decodeDirectly<Payload: Decodable>(_ type: Payload.Type, from document: Document) -> Payload? {
        guard let direct = Payload.self as? any WireJSONDecodable.Type else { return nil }
        func read<Direct: WireJSONDecodable>(_ direct: Direct.Type) -> Payload? {
            (try? Direct(json: document, at: 0)) as? Payload
        }
        return read(direct)
    }

    /// An object of a parsed document, read key by key as a `KeyedDecodingContainer` is, with the same
    /// rules, without Codable.
    struct Object<Key: CodingKey> {
        let document: Document
        let node: Int
        /// Where the next search for a key starts: after the last key found (``Document/member(_:of:from:)``).
        private var next: Int?

        /// The object at `node`.
        /// - Throws: ``Fallback`` when the value there is not an object.
        init(_ document: Document, at node: Int, keyedBy: Key.Type) throws(Fallback) {
            guard document.nodes[node].kind == .object else { throw Fallback() }
            self.document = document
            self.node = node
        }

        /// The value of `key`.
        /// - Throws: ``Fallback`` when it is absent, null or not a `Value`.
        mutating func decode<Value: WireJSONDecodable>(_ type: Value.Type, forKey key: Key) throws(Fallback) -> Value {
            guard let value = member(key) else { throw Fallback() }
            return try Value(json: document, at: value)
        }

        /// The value of `key`, or nil when it is absent or null, as `decodeIfPresent` gives.
        /// - Throws: ``Fallback`` when it is not a `Value`.
        mutating func decodeIfPresent<Value: WireJSONDecodable>(
            _ type: Value.Type, forKey key: Key
        ) throws(Fallback) -> Value? {
            guard let value = member(key), document.nodes[value].kind != .null else { return nil }
            return try Value(json: document, at: value)
        }

        private mutating func member(_ key: Key) -> Int? {
            guard let value = document.member(key.stringValue, of: node, from: next) else { return nil }
            next = value + document.nodes[value].size
            return value
        }

        /// The value of `key`, checked by `rule`.
        /// - Throws: ``Fallback`` when it is absent, not a `Value`, or breaks the rule.
        mutating func decode<Value: WireJSONDecodable>(_ key: Key, _ rule: ValueRule<Value>) throws(Fallback) -> Value {
            try checked(decode(Value.self, forKey: key), rule)
        }

        /// The value of `key` when present and not null, checked by `rule`.
        /// - Throws: ``Fallback`` when it is not a `Value` or breaks the rule.
        mutating func decodeIfPresent<Value: WireJSONDecodable>(
            _ key: Key, _ rule: ValueRule<Value>
        ) throws(Fallback) -> Value? {
            guard let value = try decodeIfPresent(Value.self, forKey: key) else { return nil }
            return try checked(value, rule)
        }

        /// Checks the value of `key`, such as the `schema`.
        /// - Throws: ``Fallback`` when it is absent, not a `Value`, or breaks the rule.
        mutating func check<Value: WireJSONDecodable>(_ key: Key, _ rule: ValueRule<Value>) throws(Fallback) {
            _ = try decode(key, rule)
        }

        private func checked<Value>(_ value: Value, _ rule: ValueRule<Value>) throws(Fallback) -> Value {
            guard rule.problem(value) == nil else { throw Fallback() }
            return value
        }
    }
}

extension String: WireJSONDecodable {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        self = try document.string(node)
    }
}

extension Double: WireJSONDecodable {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        self = try document.double(node)
    }
}

/// An integer without a fraction or an exponent, as `WireJSON`'s Codable path reads it.
extension WireJSONDecodable where Self: FixedWidthInteger {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        self = try document.integer(node)
    }
}

extension Int: WireJSONDecodable {}
extension UInt64: WireJSONDecodable {}

extension Bool: WireJSONDecodable {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        self = try document.bool(node)
    }
}

/// Seconds since 1970, as ``WireCodec`` writes dates.
extension Date: WireJSONDecodable {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        self.init(timeIntervalSince1970: try document.double(node))
    }
}

extension DeviceID: WireJSONDecodable {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        guard let id = try? DeviceID(document.string(node)) else { throw WireJSON.Fallback() }
        self = id
    }
}

/// A string enum, one of its raw values (as `Decoder.decodeEnum` reads it).
extension WireJSONDecodable where Self: RawRepresentable, RawValue == String {
    init(json document: WireJSON.Document, at node: Int) throws(WireJSON.Fallback) {
        guard let value = Self(rawValue: try document.string(node)) else { throw WireJSON.Fallback() }
        self = value
    }
}

extension EnvelopeEvent: WireJSONDecodable {}
extension FixMode: WireJSONDecodable {}
extension StatusMessage.State: WireJSONDecodable {}
extension StatusMessage.Reason: WireJSONDecodable {}
