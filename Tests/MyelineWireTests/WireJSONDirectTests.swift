import Foundation
import Testing
import TestSupport

@testable import LiveActivity
@testable import MyelineWire

/// The direct readers (``WireJSONDecodable``, no Codable) against `JSONDecoder`: whatever a reader
/// accepts, `JSONDecoder` accepts with the same value; whatever `JSONDecoder` refuses, the reader
/// refuses. Over the samples, the invalid and hostile tables, and every key of the envelope and the
/// status set to every kind of value, removed, or added where absent.
struct WireJSONDirectTests {
    typealias Envelope = ActivityEnvelope<LocationActivityAttributes>

    /// `type` read from `bytes` by its direct reader alone; nil when the reader falls back.
    static func direct<T: WireJSONDecodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
        guard let document = WireJSON.Document(bytes) else { return nil }
        return try? T(json: document, at: 0)
    }

    /// Whether the direct reader took `bytes`; expects `JSONDecoder` to agree either way.
    @discardableResult
    static func agree<T: WireJSONDecodable & Equatable>(
        _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let fast = direct(type, bytes)
        if let fast {
            // Only then: JSONDecoder traps on some of the nesting the direct path refuses.
            let slow = try? WireJSONTests.jsonDecoder.decode(type, from: Data(bytes))
            #expect(
                slow == fast, "JSONDecoder disagrees on \(String(decoding: bytes, as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
        return fast != nil
    }

    static func agree(_ kind: PayloadKind, _ bytes: [UInt8]) -> Bool? {
        switch kind {
        case .envelope: agree(Envelope.self, bytes)
        case .status: agree(StatusMessage.self, bytes)
        case .track, .command, .commandResult: nil
        }
    }

    @Test func everyEnvelopeAndStatusMyelineWritesIsReadDirectly() async throws {
        let samples = try await WireSample.all()
        var read = 0
        for sample in samples {
            guard let taken = Self.agree(try #require(sample.kind), Array(sample.data)) else { continue }
            #expect(taken, "\(sample.name)")
            read += 1
        }
        #expect(read == 9)
    }

    @Test(arguments: InvalidPayload.all.filter { $0.data != nil && ($0.kind == .envelope || $0.kind == .status) })
    func invalidPayloadsAreRefused(_ payload: InvalidPayload) throws {
        #expect(Self.agree(payload.kind, Array(try #require(payload.data))) == false)
    }

    @Test(arguments: AcceptedPayload.all)
    func acceptedPayloadsAreReadAsJSONDecoderReadsThem(_ payload: AcceptedPayload) {
        if case .envelope = payload.expected { Self.agree(Envelope.self, Array(payload.json.utf8)) }
    }

    @Test func theHostileCorpusIsReadAsJSONDecoderReadsIt() {
        var taken = 0
        for hostile in HostileCorpus.cases() {
            if Self.agree(Envelope.self, hostile.payload) { taken += 1 }
            Self.agree(StatusMessage.self, hostile.payload)
        }
        #expect(taken > 0)
    }

    /// Every key of each object, by its path from the payload's top: what the mutations below visit.
    static let envelopeKeys: [[String]] =
        [
            "activity", "alert", "attributes", "attributes-type", "content-state", "device", "dismissal-date",
            "event", "relevance-score", "schema", "seq", "stale-date", "timestamp",
        ].map { [$0] }
        + ["body", "sound", "title"].map { ["alert", $0] }
        + ["destination", "deviceID", "driver", "name", "vehicle"].map { ["attributes", $0] }
        + ["latitude", "longitude", "name"].map { ["attributes", "destination", $0] }
        + [
            "altitude", "course", "destination", "distance", "elapsed", "eta", "fix", "fixTime", "horizontalAccuracy",
            "latitude", "longitude", "paused", "progress", "satellites", "speed", "status",
        ].map { ["content-state", $0] }
        + ["latitude", "longitude", "name"].map { ["content-state", "destination", $0] }

    static let statusKeys: [[String]] = [
        "clock-offset", "device", "dropped", "instance", "power-losses", "reason", "schema", "since", "state",
        "storage-error", "version",
    ].map { [$0] }

    /// The values each key is set to: every JSON type, and the edges of every rule (ranges, lengths,
    /// ids, enums, integer sizes).
    static var values: [Any] {
        [
            NSNull(), "", "x", "van-7", "Van 7", "update", "end", "start", "online", "offline", "3d", "none",
            "location",
            "myeline.activity.v1", "myeline.status.v1", String(repeating: "y", count: 65),
            String(repeating: "é", count: 64), String(repeating: "z", count: 1025), 0, -1, 1, 2, 0.5, 1.5, 90, 90.5,
            -90.5, 180.5, 360, 360.5, 1e300, -1e300, Int64.max, UInt64.max, 1_700_000_000.125, true, false,
            [String: Any](), [Any](), ["title": "t", "body": "b"], ["name": "n", "latitude": 1, "longitude": 2],
            ["deviceID": "van-7", "name": "n"], ["fix": "none", "distance": 0, "elapsed": 0, "paused": false],
        ]
    }

    /// `object` with the value at `path` replaced by `value`, or removed when `value` is nil.
    static func setting(_ path: ArraySlice<String>, to value: Any?, in object: [String: Any]) -> [String: Any] {
        var object = object
        guard let key = path.first else { return object }
        if path.count == 1 {
            object[key] = value
        } else if let inner = object[key] as? [String: Any] {
            object[key] = setting(path.dropFirst(), to: value, in: inner)
        }
        return object
    }

    /// The payload with the key at `path` set to each value and removed, as bytes.
    static func mutations(of payload: Data, at path: [String]) throws -> [[UInt8]] {
        let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        return try (values.map { $0 as Any? } + [nil]).map { value in
            Array(try JSONSerialization.data(withJSONObject: setting(path[...], to: value, in: object)))
        }
    }

    @Test func everyKeySetToEveryKindOfValueIsReadAsJSONDecoderReadsIt() async throws {
        var (taken, refused) = (0, 0)
        for sample in try await WireSample.all() {
            let keys: [[String]]
            switch sample.kind {
            case .envelope: keys = Self.envelopeKeys
            case .status: keys = Self.statusKeys
            default: continue
            }
            for path in keys {
                for bytes in try Self.mutations(of: sample.data, at: path) {
                    let read =
                        sample.kind == .envelope
                        ? Self.agree(Envelope.self, bytes) : Self.agree(StatusMessage.self, bytes)
                    if read { taken += 1 } else { refused += 1 }
                }
            }
        }
        // Both sides of the comparison happen, in numbers.
        #expect(taken > 500)
        #expect(refused > 2000)
    }

    @Test func theKeysVisitedAreTheSchemasKeys() throws {
        func properties(_ schema: String) throws -> Set<String> {
            let url = repositoryDirectory.appending(path: "docs/schema/\(schema).json")
            var keys: Set<String> = []
            func walk(_ value: Any) {
                if let object = value as? [String: Any] {
                    if let members = object["properties"] as? [String: Any] { keys.formUnion(members.keys) }
                    object.values.forEach(walk)
                } else if let array = value as? [Any] {
                    array.forEach(walk)
                }
            }
            walk(try JSONSerialization.jsonObject(with: Data(contentsOf: url)))
            return keys
        }
        #expect(Set(Self.envelopeKeys.compactMap(\.last)) == (try properties("activity-envelope")))
        #expect(Set(Self.statusKeys.compactMap(\.last)) == (try properties("status")))
    }

    /// Numbers in every form the grammar allows, with few and many digits and exponents.
    @Test func numbersReadByTheFastPathAreTheNumbersStrtodReads() throws {
        var generator = SeededGenerator(seed: 17)
        var texts = [
            "0", "-0", "0.0", "-0.0", "1", "9007199254740992", "9007199254740993", "1e22", "1e23", "1e-22", "1e-23",
            "123456789012345678", "1234567890123456789", "12345678901234567890", "0.1", "0.30000000000000004",
            "1700000060.123", "52.520008", "-33.8688", "151.2093", "4.8", "1e0", "1E+2", "2.5e-3", "0e9999",
            "0.000000000000000000000000001", "100000000000000000000000", "1.7976931348623157e308", "5e-324",
        ]
        for _ in 0..<20_000 {
            let integer = String(UInt64.random(in: 0...UInt64.max, using: &generator) >> (generator.next() % 64))
            let fraction = String(UInt64.random(in: 0...999_999_999_999, using: &generator))
            let exponent = Int.random(in: -30...30, using: &generator)
            switch generator.next() % 4 {
            case 0: texts.append(integer)
            case 1: texts.append("\(integer).\(fraction)")
            case 2: texts.append("-\(integer).\(fraction)e\(exponent)")
            default: texts.append("\(integer)E\(exponent)")
            }
        }
        var fast = 0
        for text in texts {
            let document = try #require(WireJSON.Document(Array(text.utf8)), "\(text)")
            guard let value = document.exactDouble(document.nodes[0]) else { continue }
            fast += 1
            let expected = try #require(Double(text))
            #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) instead of \(expected)")
        }
        #expect(fast > 5_000)
    }
}
