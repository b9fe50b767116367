import FoundationEssentials
import LiveActivity

/// The one JSON codec of every Myeline payload, writing with the model's ``ContentJSON`` (keys
/// sorted, slashes unescaped, dates as UNIX epoch seconds rounded to milliseconds, absent optionals
/// omitted) and reading through ``WireJSON``'s fast path or `JSONDecoder`.
public enum WireCodec {
    private static var encoder: JSONEncoder { ContentJSON.encoder }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// Encodes a payload, then checks the result with the receivers' own decoder, so that nothing
    /// is sent that receivers would reject (such as a latitude of 91). The agent's payloads are
    /// written without `JSONEncoder` (``WireJSONEncodable``: the same bytes): a track point, one a
    /// fix (the hot path), is checked with the decoder's rules on its values
    /// (``TrackPoint/refusal()``: the same verdict and message); a status or a `location`
    /// envelope by ``WireJSON``'s reader, and when that refuses it, by the encoder and decoder
    /// below, which say why.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` naming the key and the problem, for example
    ///   `cannot encode myeline.track.v1 payload: 'latitude': 91 is outside -90...90`.
    public static func encode<Payload: Codable & WirePayload>(_ payload: Payload) throws(ActivityError) -> Data {
        do {
            if let point = payload as? TrackPoint, let json = point.directJSON() {
                if let refusal = point.refusal() { throw refusal }
                return Data(json)
            }
            if let json = directJSON(payload), WireJSON.decode(Payload.self, from: json) != nil {
                return Data(json)
            }
            let data = try encoder.encode(payload)
            // The receivers' fast path; JSONDecoder only to say what is wrong.
            if WireJSON.decode(Payload.self, from: Array(data)) == nil {
                _ = try decoder.decode(Payload.self, from: data)
            }
            return data
        } catch {
            throw ActivityError(.invalidPayload, "cannot encode \(Payload.schema) payload: \(problem(error))")
        }
    }

    /// The payload written by its ``WireJSONEncodable`` conformance: the agent's envelopes and
    /// statuses. Cast to each type rather than to the protocol, whose conformance lookup brought the
    /// Swift runtime's lookup code into memory at every heartbeat (issue 24).
    private static func directJSON(_ payload: some Codable & WirePayload) -> [UInt8]? {
        switch payload {
        case let envelope as ActivityEnvelope<LocationActivityAttributes>: envelope.directJSON(capacity: 1024)
        case let status as StatusMessage: status.directJSON(capacity: 512)
        default: nil
        }
    }

    /// Decodes and checks a payload.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` naming the key and the problem, for example
    ///   `invalid myeline.activity.v1 payload: missing key 'seq'` or
    ///   `invalid myeline.track.v1 payload: 'latitude': 123.4 is outside -90...90`. A key that appears
    ///   twice in one object is refused too (`duplicate key 'seq'`): receivers in other languages
    ///   would each keep another of the two values.
    public static func decode<Payload: Decodable & WirePayload>(
        _ type: Payload.Type, from data: Data
    ) throws(ActivityError) -> Payload {
        try decode(type, from: Array(data))
    }

    /// Decodes and checks a payload, as ``decode(_:from:)-(_,Data)`` does.
    ///
    /// A well-formed payload takes ``WireJSON``'s fast path; anything else (duplicate keys and
    /// trailing commas included) is decoded by `JSONDecoder` and checked by ``WireJSON/Diagnosis``, whose
    /// errors name the problem.
    public static func decode<Payload: Decodable & WirePayload>(
        _ type: Payload.Type, from bytes: [UInt8]
    ) throws(ActivityError) -> Payload {
        if let payload = WireJSON.decode(type, from: bytes) { return payload }
        return try decodeWithJSONDecoder(type, from: bytes)
    }

    /// Decodes and checks a payload with `JSONDecoder` and ``WireJSON/Diagnosis`` alone, never ``WireJSON``'s
    /// fast paths: what ``decode(_:from:)-(_,[UInt8])`` falls back to, and the reference that the
    /// `FuzzEnvelope` target holds the fast paths to (the same value, or a refusal by both).
    ///
    /// - Throws: `ActivityError` `.invalidPayload`, as ``decode(_:from:)-(_,[UInt8])`` does.
    @_spi(Fuzzing)
    public static func decodeWithJSONDecoder<Payload: Decodable & WirePayload>(
        _ type: Payload.Type, from bytes: [UInt8]
    ) throws(ActivityError) -> Payload {
        let data = Data(bytes)
        // Refused before the decoder's scanner recurses into it (``WireCodec/maximumNesting``); the
        // diagnosis names the first problem, the nesting or an earlier one.
        if let offset = WireCodec.excessiveNesting(in: bytes) {
            let problem: String
            if let finding = WireJSON.Diagnosis.finding(in: data), finding.isSyntax {
                problem = "\(finding)"
            } else {
                problem =
                    "not valid JSON: arrays and objects nested more than \(WireCodec.maximumNesting) deep at byte \(offset)"
            }
            throw ActivityError(.invalidPayload, "invalid \(Payload.schema) payload: \(problem)")
        }
        let payload: Payload
        do {
            payload = try decoder.decode(type, from: data)
        } catch {
            throw ActivityError(.invalidPayload, "invalid \(Payload.schema) payload: \(problem(error, in: data))")
        }
        // What the decoder lets pass: a duplicate key, a trailing comma.
        if let finding = WireJSON.Diagnosis.finding(in: data), !finding.isSyntax {
            throw ActivityError(.invalidPayload, "invalid \(Payload.schema) payload: \(finding)")
        }
        return payload
    }

    /// A one-line explanation of a coding error, naming the key path; `data` explains the decoder's
    /// bare "not valid JSON".
    private static func problem(_ error: any Error, in data: Data? = nil) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty && data != nil:
            data.map(syntaxProblem) ?? context.debugDescription
        case DecodingError.keyNotFound(let key, let context):
            "missing key '\(path(context.codingPath + [key]))'"
        case DecodingError.valueNotFound(let type, let context):
            "\(subject(context.codingPath)) is null; expected \(jsonType(type))"
        case DecodingError.typeMismatch(let type, let context):
            "\(subject(context.codingPath)) has the wrong type; expected \(jsonType(type))"
        case DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty:
            context.debugDescription
        case DecodingError.dataCorrupted(let context):
            "\(subject(context.codingPath)): \(context.debugDescription)"
        case EncodingError.invalidValue(_, let context):
            "\(subject(context.codingPath)): \(context.debugDescription)"
        default:
            "\(error)"
        }
    }

    /// Why the decoder found `data` not valid JSON: what Foundation's JSON parser says (`Invalid value
    /// around character 7.`), a trailing comma, or else a number the decoder cannot hold.
    private static func syntaxProblem(_ data: Data) -> String {
        switch WireJSON.Diagnosis.finding(in: data) {
        case let finding? where !finding.isDuplicateKey: return "\(finding)"
        default: break
        }
        return "not valid JSON here: a number that does not fit its key (a fraction or more than 64 bits"
            + " for an integer, beyond ±1.8e308 or nearer to 0 than 2.2e-308 for a number)"
    }

    /// The quoted key path, such as `'content-state.latitude'`, or "the payload" for the top level.
    private static func subject(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the payload" : "'\(path(codingPath))'"
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map(\.stringValue).joined(separator: ".")
    }

    private static func jsonType(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }
}
