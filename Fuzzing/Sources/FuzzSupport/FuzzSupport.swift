import Foundation
import LiveActivity
import MyelineWire
import Logging

/// What the fuzz targets share.
public enum FuzzSupport {
    /// A logger that drops everything: decoders log their first rejection of each kind, and a fuzzer
    /// runs them millions of times.
    public static let quietLogger = Logger(label: "myeline.fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Checks that a payload the receivers accepted can be sent again: it encodes, the encoding
    /// decodes, and encoding that gives the same bytes (dates are rounded to milliseconds once).
    public static func checkRoundTrip<Payload: Codable & WirePayload>(_ payload: Payload) {
        do {
            let encoded = try WireCodec.encode(payload)
            let again = try WireCodec.encode(WireCodec.decode(Payload.self, from: encoded))
            precondition(again == encoded, "\(Payload.schema): re-encoding changed the payload")
        } catch {
            preconditionFailure("an accepted \(Payload.schema) payload cannot be sent again: \(error.message)")
        }
    }

    /// Checks that a refusal is an invalid-payload error with a message.
    public static func checkRefusal(_ error: ActivityError) {
        precondition(error.code == .invalidPayload && !error.message.isEmpty)
    }
}
