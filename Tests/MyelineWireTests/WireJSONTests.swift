import Foundation
import Testing
import TestSupport

@testable import LiveActivity
@testable import MyelineWire

/// The fast path of `WireCodec.decode` against `JSONDecoder`: whatever it accepts, `JSONDecoder`
/// accepts with the very same value; what it does not take as certainly valid, it leaves to
/// `JSONDecoder`. And the payloads Myeline writes do take it.
struct WireJSONTests {
    static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    typealias Envelope = ActivityEnvelope<LocationActivityAttributes>

    /// Whether the fast path decoded `bytes` as `type`; when it did, expects JSONDecoder's value to be the same.
    static func fastPath<T: Decodable & Equatable>(
        _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        guard let fast = WireJSON.decode(type, from: bytes) else { return false }
        let slow = try? jsonDecoder.decode(type, from: Data(bytes))
        #expect(
            slow == fast, "JSONDecoder disagrees on \(String(decoding: bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
        return true
    }

    static func fastPath(_ kind: PayloadKind, _ bytes: [UInt8]) -> Bool {
        switch kind {
        case .envelope: fastPath(Envelope.self, bytes)
        case .status: fastPath(StatusMessage.self, bytes)
        case .track: fastPath(TrackPoint.self, bytes)
        case .command: fastPath(Command.self, bytes)
        case .commandResult: fastPath(CommandResult.self, bytes)
        }
    }

    @Test func everyPayloadMyelineWritesTakesTheFastPath() async throws {
        let samples = try await WireSample.all()
        #expect(samples.count > 5)
        for sample in samples {
            let kind = try #require(sample.kind)
            #expect(Self.fastPath(kind, Array(sample.data)), "\(sample.name)")
        }
    }

    @Test(arguments: InvalidPayload.all.filter { $0.data != nil })
    func invalidPayloadsAreLeftToJSONDecoder(_ payload: InvalidPayload) throws {
        #expect(!Self.fastPath(payload.kind, Array(try #require(payload.data))))
    }

    @Test func theHostileCorpusIsDecodedAsJSONDecoderDecodesIt() {
        var taken = 0
        for hostile in HostileCorpus.cases() {
            if Self.fastPath(Envelope.self, hostile.payload) { taken += 1 }
            _ = Self.fastPath(StatusMessage.self, hostile.payload)
        }
        // Some hostile envelopes are valid JSON and valid envelopes (on a wrong topic, say).
        #expect(taken > 0)
    }

    /// A start envelope with `name` as the attributes' name (JSON text, quotes included) and
    /// `number` as its relevance score.
    static func envelope(name: String = #""Van 7""#, number: String = "0", extra: String = "") -> [UInt8] {
        Array(
            ("{\"activity\":\"a1\",\"attributes\":{\"deviceID\":\"van-7\",\"name\":\(name)},\"attributes-type\":\"location\","
                + "\"content-state\":{\"distance\":0,\"elapsed\":0,\"fix\":\"none\",\"paused\":false},\"device\":\"van-7\","
                + "\"event\":\"start\",\"relevance-score\":\(number),\"schema\":\"myeline.activity.v1\",\"seq\":1,"
                + "\"timestamp\":1700000000.5\(extra)}").utf8)
    }

    /// Texts the fast path takes, with the value JSONDecoder gives too.
    static let accepted: [(String, String)] = [
        (#""Van 7""#, "Van 7"), (#""\"quoted\"""#, "\"quoted\""), (#""back\\slash""#, "back\\slash"),
        (#""a\/b""#, "a/b"), (#""tab\there""#, "tab\there"), (#""line\nbreak""#, "line\nbreak"),
        (#""\u00e9t\u00E9""#, "été"), (#""été""#, "été"), (#""\ud83d\ude90 van""#, "🚐 van"), (#""🚐""#, "🚐"),
        (#""\u0000""#, "\u{0}"), (#""\b\f\r""#, "\u{08}\u{0C}\r"),
    ]

    @Test(arguments: accepted) func stringsAreUnescapedAsJSONDecoderDoes(_ text: String, _ expected: String) throws {
        let bytes = Self.envelope(name: text)
        #expect(Self.fastPath(Envelope.self, bytes))
        #expect(WireJSON.decode(Envelope.self, from: bytes)?.attributes.name == expected)
    }

    static let numbers: [(String, Double?)] = [
        ("0", 0), ("-0", 0), ("12", 12), ("-3.25", -3.25), ("1e2", 100), ("1E+2", 100), ("2.5e-3", 0.0025),
        ("52.500070000000001", 52.500070000000001), ("123456789012345678901234567890", 1.2345678901234568e29),
        ("1e400", nil), ("1e-400", nil), ("01", nil), ("1.", nil), (".5", nil), ("+1", nil), ("NaN", nil),
        ("Infinity", nil), ("-Infinity", nil), ("-", nil), ("1e", nil), ("0x10", nil), ("1_000", nil),
    ]

    @Test(arguments: numbers) func numbersFollowTheGrammarOrAreLeftToJSONDecoder(_ text: String, _ expected: Double?) {
        let bytes = Self.envelope(number: text)
        #expect(Self.fastPath(Envelope.self, bytes) == (expected != nil))
        if let expected { #expect(WireJSON.decode(Envelope.self, from: bytes)?.content.relevanceScore == expected) }
    }

    /// Well-formed or not, none of these is the fast path's to judge.
    static let leftToJSONDecoder: [(String, [UInt8])] = [
        ("duplicate key", envelope(extra: #","seq":2"#)),
        ("escaped key", envelope(extra: #","\u0073eq":2"#)),
        ("lone high surrogate", envelope(name: #""\ud83d""#)),
        ("lone low surrogate", envelope(name: #""\ude90""#)),
        ("unknown escape", envelope(name: #""\x41""#)),
        ("short unicode escape", envelope(name: #""\u00e""#)),
        ("control character", envelope(name: "\"a\u{01}b\"")),
        ("invalid UTF-8", Array("{\"name\":\"".utf8) + [0xC3, 0x28] + Array("\"}".utf8)),
        ("byte order mark", [0xEF, 0xBB, 0xBF] + envelope()),
        ("trailing garbage", envelope() + Array(" x".utf8)),
        ("two documents", envelope() + envelope()),
        ("unterminated", Array(envelope().dropLast())),
        ("trailing comma", envelope(extra: ",")),
        ("single quotes", envelope(name: "'Van 7'")),
        ("bare word", envelope(name: "Van")),
        (
            "deep nesting",
            envelope(extra: #","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40))
        ),
        ("empty", []),
    ]

    @Test(arguments: leftToJSONDecoder) func malformedOrAmbiguousTextIsLeftToJSONDecoder(
        _ name: String, _ bytes: [UInt8]
    ) {
        #expect(WireJSON.decode(Envelope.self, from: bytes) == nil, "\(name)")
    }

    /// Keys of the same length, first and last byte share their object's Bloom bit: they are compared,
    /// and different keys are not duplicates.
    @Test func keysThatShareABitAreComparedNotRefused() throws {
        let bytes = Self.envelope(extra: #","sxq":2,"sbq":{"aa":1,"ba":2,"a":3}"#)
        let document = try #require(WireJSON.Document(bytes))
        let seq = try #require(document.member("seq", of: 0))
        #expect(try document.integer(seq) as Int == 1)
        #expect(document.member("sq", of: 0) == nil && document.member("sbx", of: 0) == nil)
        #expect(Self.fastPath(Envelope.self, bytes))
    }

    @Test func whitespaceAndUnknownKeysAreFine() {
        let spaced = Array(
            String(decoding: Self.envelope(extra: #","future":{"list":[1,2.5,"x",null,true,false,{}]}"#), as: UTF8.self)
                .replacingOccurrences(of: ",", with: " ,\n\t").replacingOccurrences(of: ":", with: "\r: ").utf8)
        #expect(Self.fastPath(Envelope.self, spaced))
    }
}
