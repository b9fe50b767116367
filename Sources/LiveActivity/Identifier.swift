/// The syntax of the ids that are MQTT topic levels or wire names: device ids, activity ids and
/// attributes type names. It matches `^[a-z0-9][a-z0-9._-]{0,63}$`, so never `/`, `+` or `#`.
package enum Identifier {
    /// What an id identifies, as error messages name it.
    package enum Kind: String {
        case device = "device id"
        case activity = "activity id"
        case attributesType = "attributes type"
    }

    /// How to write a valid id, for error messages.
    package static let rule = "use 1-64 characters a-z, 0-9, '.', '_' or '-', starting with a letter or digit"

    /// Whether `value` is a valid id.
    package static func isValid(_ value: String) -> Bool {
        // A board checks several ids in every message: the contiguous bytes of a native string, when
        // it has them, are read several times faster than through the UTF-8 view's indices.
        value.utf8.withContiguousStorageIfAvailable(isValid) ?? isValid(value.utf8)
    }

    private static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first, bytes.count <= 64, isLetterOrDigit(first) else { return false }
        for byte in bytes
        where
            !(isLetterOrDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-"))
        {
            return false
        }
        return true
    }

    /// The error message for an invalid id, naming its kind and value; nil when it is valid.
    package static func problem(_ value: String, as kind: Kind) -> String? {
        isValid(value) ? nil : "invalid \(kind.rawValue) \(String(reflecting: value)): \(rule)"
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
