import FoundationEssentials
import LiveActivity

/// A JSON value as it came on the wire: how ``AnyActivityEnvelope`` keeps the `attributes` and
/// `content-state` of an attributes type the receiver has no Swift type for.
///
/// Numbers are `Double`s: an integer beyond 2^53 loses digits, as in JavaScript. A value nested
/// deeper than ``maximumDepth`` levels below the payload's top is refused (the fast path of
/// ``WireCodec`` parses no deeper, and the decode recurses once per level).
public enum WireValue: Codable, Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A finite number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([WireValue])
    /// An object, by key.
    case object([String: WireValue])

    /// The deepest a value may be nested in its payload, levels below the top object.
    public static let maximumDepth = 32

    /// What the value is, for messages: `an object`, `a number`…
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Any JSON key, for reading an object whose keys are not known.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes any JSON value.
    ///
    /// - Throws: `DecodingError` for a number no `Double` holds (such as `1e999`) or nesting deeper
    ///   than ``maximumDepth``.
    public init(from decoder: any Decoder) throws {
        guard decoder.codingPath.count <= Self.maximumDepth else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "nested deeper than \(Self.maximumDepth) levels"))
        }
        // A container is asked for first: only an object gives a keyed one, only an array an unkeyed
        // one, and their members' errors then propagate as they are.
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: WireValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(WireValue.self, forKey: key) }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [WireValue] = []
            while !array.isAtEnd { elements.append(try array.decode(WireValue.self)) }
            self = .array(elements)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let string = try? value.decode(String.self) {
                self = .string(string)
            } else {
                self = .number(try value.decode(Double.self))
            }
        }
    }

    /// Encodes the value as it came.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
