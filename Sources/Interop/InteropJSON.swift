import FoundationEssentials

/// The JSON of Interop's messages: written with sorted keys and unescaped slashes, one line, so a
/// message's text is stable (golden tests pin it); read leniently, one field at a time.
enum InteropJSON {
    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Callers pass finite numbers (the initializers drop non-finite optionals); should one
        // slip through, it is written as a string rather than trapping.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        // Plain strings, numbers and nested containers: nothing else can fail.
        return Array(try! encoder.encode(value))
    }

    /// One member of a received object, of whichever JSON type it is.
    enum Value: Decodable {
        case number(Double)
        case string(String)
        /// `true`, `false`, `null`, an array or an object: never a valid OwnTracks scalar here.
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if (try? container.decode(Bool.self)) != nil {
                self = .other
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .string(text)
            } else {
                self = .other
            }
        }
    }
}
