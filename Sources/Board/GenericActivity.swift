import Foundation
import LiveActivity
import MyelineWire

/// An activity of an attributes type the board has no columns for, as it shows it (docs/topics.md:
/// a consumer shows a type it does not know generically): its type, its name, and the top-level
/// values of its content state as they are, without guessing what they mean.
public struct GenericActivity: Hashable, Sendable {
    /// The attributes type (`attributes-type`), such as `com.example.pin`.
    public var type: String
    /// The attributes' `name` when it is a string; nil otherwise (the board shows the activity id).
    public var name: String?
    /// The content state's top-level strings, numbers and booleans, in the keys' order by their UTF-8
    /// bytes (as the JSON lines write them); nulls, objects and arrays are left out.
    public var fields: [Field]

    /// One top-level value of the content state.
    public struct Field: Hashable, Sendable {
        /// Its key.
        public var key: String
        /// Its value: a string, a number or a boolean.
        public var value: JSONValue

        /// Creates a field.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Creates an activity from its parts.
    public init(type: String, name: String?, fields: [Field]) {
        self.type = type
        self.name = name
        self.fields = fields
    }

    /// What the board shows of `envelope`.
    init(_ envelope: AnyActivityEnvelope) {
        type = envelope.header.attributesType
        if case .string(let name) = envelope.attributes["name"] { self.name = name }
        fields = envelope.content.state.compactMap { key, value in
            switch value {
            case .string(let text): Field(key: key, value: .string(text))
            case .number(let number): Field(key: key, value: .number(number))
            case .bool(let flag): Field(key: key, value: .bool(flag))
            case .null, .array, .object: nil
            }
        }
        .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// The fields as `key=value` pairs, the values as JSON writes them (strings quoted and escaped):
    /// `count=2, note="two pallets waiting"`; `no fields` when there are none. Not yet made safe for a
    /// terminal (``TerminalText/sanitized(_:)``).
    public var fieldsText: String {
        guard !fields.isEmpty else { return "no fields" }
        return fields.map { "\($0.key)=\($0.value.text)" }.joined(separator: ", ")
    }
}
