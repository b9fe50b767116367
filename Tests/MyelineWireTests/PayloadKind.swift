import Foundation
import LiveActivity
import MyelineWire
import TestSupport

/// The payload types, by their schema file in docs/schema.
enum PayloadKind: String, Sendable, CaseIterable {
    case envelope = "activity-envelope.json"
    case status = "status.json"
    case track = "track.json"
    case command = "command.json"
    case commandResult = "command-result.json"

    /// The kind whose schema name is `schema`, such as `myeline.status.v1`.
    init?(schema: String) {
        guard let kind = Self.allCases.first(where: { $0.schema == schema }) else { return nil }
        self = kind
    }

    var schemaFile: String { rawValue }

    var schema: String {
        switch self {
        case .envelope: EnvelopeHeader.schema
        case .status: StatusMessage.schema
        case .track: TrackPoint.schema
        case .command: Command.schema
        case .commandResult: CommandResult.schema
        }
    }

    /// Decodes `data` as this kind (envelopes as location envelopes).
    func decode(_ data: Data) throws(ActivityError) {
        switch self {
        case .envelope: _ = try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: data)
        case .status: _ = try WireCodec.decode(StatusMessage.self, from: data)
        case .track: _ = try WireCodec.decode(TrackPoint.self, from: data)
        case .command: _ = try WireCodec.decode(Command.self, from: data)
        case .commandResult: _ = try WireCodec.decode(CommandResult.self, from: data)
        }
    }
}
