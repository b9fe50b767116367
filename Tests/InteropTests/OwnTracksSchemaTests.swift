import Foundation
import Interop
import TestSupport
import Testing

/// Myeline's OwnTracks messages pass owntracks/json-schema's `message.json` (copied, with its MIT
/// licence, in docs/schema/owntracks), checked by scripts/validate-json.py as the Myeline schemas
/// are; the broken samples show the schema can fail.
@Suite("OwnTracks JSON Schema", .timeLimit(.minutes(1)))
struct OwnTracksSchemaTests {
    @Test("every message Myeline writes is valid; a location without lon and an lwt without tst are not")
    func schema() async throws {
        let full = OwnTracksLocation(
            time: fixTime, latitude: 52.520_008, longitude: 13.404_954, altitude: 34.4, speed: 12.5, course: 271.6,
            horizontalAccuracy: 4.2, trackerID: "v7", trigger: OwnTracksLocation.Trigger.timer, battery: 80)
        let bare = OwnTracksLocation(
            time: fixTime, latitude: -1, longitude: -2, altitude: nil, speed: nil, course: nil, horizontalAccuracy: nil,
            trackerID: nil, trigger: OwnTracksLocation.Trigger.reportLocation)
        let cases: [(name: String, payload: [UInt8], valid: Bool)] = [
            ("location with every field", OwnTracksCodec.encode(.location(full)), true),
            ("bare location answering reportLocation", OwnTracksCodec.encode(.location(bare)), true),
            ("lwt", OwnTracksCodec.encode(.lastWill(timestamp: 1_709_294_400)), true),
            (
                "reportLocation cmd", OwnTracksCodec.encode(.command(action: OwnTracksMessage.reportLocationAction)),
                true
            ),
            ("location without lon", Array(#"{"_type":"location","lat":1,"tst":1}"#.utf8), false),
            ("lwt without tst", Array(#"{"_type":"lwt"}"#.utf8), false),
            ("unknown cmd action", OwnTracksCodec.encode(.command(action: "selfDestruct")), false),
        ]
        let lines = try await validateJSON(
            cases.map {
                JSONSchemaCase(name: $0.name, schema: "message.json", data: Data($0.payload), valid: $0.valid)
            },
            schemaDirectory: repositoryDirectory.appendingPathComponent("docs/schema/owntracks").path)
        let output = lines.joined(separator: "\n")
        #expect(lines.count == cases.count, "one result line per case:\n\(output)")
        for line in lines where !line.hasPrefix("PASS\t") { Issue.record("unexpected result: \(line)") }
    }
}
