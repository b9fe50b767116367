/// A check of one decoded value: the problem with it, or nil when it is acceptable. Messages start
/// with the value, such as `123.4 is outside -90...90`.
package struct ValueRule<Value: Decodable> {
    /// The problem with `value`, or nil.
    package let problem: (Value) -> String?
}

extension ValueRule where Value == Double {
    /// A latitude in degrees, -90...90.
    package static var latitude: Self { within(-90...90) }

    /// A longitude in degrees, -180...180.
    package static var longitude: Self { within(-180...180) }

    /// A course in degrees true, 0...360.
    package static var course: Self { within(0...360) }

    /// A value in a closed range.
    package static func within(_ range: ClosedRange<Double>) -> Self {
        Self {
            range.contains($0)
                ? nil : "\(number($0)) is outside \(number(range.lowerBound))...\(number(range.upperBound))"
        }
    }

    /// A value of at least `minimum`.
    package static func atLeast(_ minimum: Double) -> Self {
        Self { $0 >= minimum ? nil : "\(number($0)) is less than \(number(minimum))" }
    }

    /// Writes whole numbers without a fraction, as JSON does: `91`, not `91.0`.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension ValueRule where Value == Int {
    /// An integer of at least `minimum`.
    package static func atLeast(_ minimum: Int) -> Self {
        Self { $0 >= minimum ? nil : "\($0) is less than \(minimum)" }
    }

    /// An integer in a closed range.
    package static func within(_ range: ClosedRange<Int>) -> Self {
        Self { range.contains($0) ? nil : "\($0) is outside \(range.lowerBound)...\(range.upperBound)" }
    }
}

extension ValueRule where Value == String {
    /// Exactly `expected`, such as a schema name.
    package static func equal(to expected: String) -> Self {
        Self { $0 == expected ? nil : "\(String(reflecting: $0)) is not \(String(reflecting: expected))" }
    }

    /// A valid activity id (1-64 characters a-z, 0-9, `.`, `_` or `-`, starting with a letter or digit).
    package static var activityID: Self { Self { Identifier.problem($0, as: .activity) } }

    /// A valid attributes type name, with the same syntax as ids.
    package static var attributesType: Self { Self { Identifier.problem($0, as: .attributesType) } }

    /// A string whose length in Unicode code points (as JSON Schema counts) is in `range`.
    package static func length(_ range: ClosedRange<Int>) -> Self {
        Self { value in
            let count = value.unicodeScalars.count
            return range.contains(count)
                ? nil : "must have \(range.lowerBound)-\(range.upperBound) characters, not \(count)"
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes the value for `key` and checks it.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at `key` with the rule's message.
    package func decode<Value>(_ key: Key, _ rule: ValueRule<Value>) throws -> Value {
        try checked(decode(Value.self, forKey: key), at: key, rule)
    }

    /// Decodes the value for `key`, if present and not null, and checks it.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at `key` with the rule's message.
    package func decodeIfPresent<Value>(_ key: Key, _ rule: ValueRule<Value>) throws -> Value? {
        try decodeIfPresent(Value.self, forKey: key).map { try checked($0, at: key, rule) }
    }

    /// Decodes the value for `key` only to check it, such as the `schema` key.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at `key` with the rule's message.
    package func check<Value>(_ key: Key, _ rule: ValueRule<Value>) throws {
        _ = try decode(key, rule)
    }

    /// The error for a key that is required here (for example by the value of another key).
    package func missing(_ key: Key) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "required here"))
    }

    /// The error for a key whose value or presence is wrong here.
    package func invalid(_ key: Key, _ problem: String) -> DecodingError {
        .dataCorruptedError(forKey: key, in: self, debugDescription: problem)
    }

    private func checked<Value>(_ value: Value, at key: Key, _ rule: ValueRule<Value>) throws -> Value {
        if let problem = rule.problem(value) { throw invalid(key, problem) }
        return value
    }
}

extension Decoder {
    /// Decodes a string enum, naming the accepted values when the string is none of them.
    package func decodeEnum<Value: RawRepresentable & CaseIterable>() throws -> Value where Value.RawValue == String {
        let container = try singleValueContainer()
        let rawValue = try container.decode(String.self)
        guard let value = Value(rawValue: rawValue) else {
            let accepted = Value.allCases.map { String(reflecting: $0.rawValue) }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(String(reflecting: rawValue)) is not one of \(accepted)")
        }
        return value
    }
}
