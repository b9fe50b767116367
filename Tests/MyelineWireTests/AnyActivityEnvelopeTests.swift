import Foundation
import Testing
import TestSupport

@_spi(Fuzzing) @testable import LiveActivity
@_spi(Fuzzing) @testable import MyelineWire

/// `AnyActivityEnvelope`: an envelope of any attributes type, read as the schema reads it, its
/// attributes and content state kept as JSON; the fast path of `WireCodec` agrees with `JSONDecoder`.
struct AnyActivityEnvelopeTests {
    /// docs/topics.md's example of an attributes type of another program.
    static let pin = Array(
        (#"{"activity":"pin-1","attributes":{"label":"Loading bay 3"},"attributes-type":"com.example.pin","#
            + #""content-state":{"count":2,"note":"two pallets waiting","at":{"x":1.5,"tags":["a",true,null]}},"#
            + #""device":"van-7","event":"update","relevance-score":0,"schema":"myeline.activity.v1","seq":2,"#
            + #""timestamp":1700000030}"#).utf8)

    @Test func anEnvelopeOfAnotherTypeIsReadAsItCame() throws {
        let envelope = try WireCodec.decode(AnyActivityEnvelope.self, from: Self.pin)
        #expect(envelope.header.attributesType == "com.example.pin" && envelope.header.seq == 2)
        #expect(envelope.attributes == ["label": .string("Loading bay 3")])
        #expect(
            envelope.content.state == [
                "count": .number(2), "note": .string("two pallets waiting"),
                "at": .object(["x": .number(1.5), "tags": .array([.string("a"), .bool(true), .null])]),
            ])
        #expect(envelope.contentStateSize == 78, "as the wire writes it: keys sorted, no spaces")
    }

    /// Every payload Myeline writes, and a location envelope held to its rules as
    /// `ActivityEnvelope<LocationActivityAttributes>` holds it.
    @Test func aLocationEnvelopeIsHeldToItsRules() async throws {
        for sample in try await WireSample.all() where sample.kind == .envelope {
            #expect((try? WireCodec.decode(AnyActivityEnvelope.self, from: sample.data)) != nil, "\(sample.name)")
        }
        let location = WireJSONTests.envelope()
        let bad = Array(
            String(decoding: location, as: UTF8.self).replacingOccurrences(of: #""fix":"none""#, with: #""fix":"4d""#)
                .utf8)
        #expect((try? WireCodec.decode(AnyActivityEnvelope.self, from: location)) != nil)
        #expect(throws: ActivityError.self) { try WireCodec.decode(AnyActivityEnvelope.self, from: bad) }
    }

    /// Refusals name the key and the problem.
    @Test(arguments: [
        (#""content-state":[1,2]"#, "'content-state': must be an object, not an array"),
        (#""content-state":null"#, "'content-state': must be an object, not null"),
        (#""content-state":{"n":1e999}"#, "Number 1e999 is not representable"),
        (#""attributes":"x""#, "'attributes': must be an object, not a string"),
    ])
    func refusalsNameTheKey(_ replacement: String, _ expected: String) throws {
        let text = String(decoding: Self.pin, as: UTF8.self)
        let key = String(replacement.prefix { $0 != ":" })
        let start = try #require(text.range(of: key + ":"))
        // The key's value runs to the next top-level key: `"content-state"` is followed by `"device"`,
        // `"attributes"` by `"attributes-type"`.
        let next = key == #""attributes""# ? #","attributes-type""# : #","device""#
        let end = try #require(text.range(of: next, range: start.upperBound..<text.endIndex))
        let payload = text.replacingCharacters(in: start.lowerBound..<end.lowerBound, with: replacement)
        do {
            _ = try WireCodec.decode(AnyActivityEnvelope.self, from: Array(payload.utf8))
            Issue.record("\(payload) was accepted")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    /// Nesting is bounded: a value 32 levels below the top is read, one 33 levels below is refused, by
    /// both decoders (the content state is 1 level down, its key's value 2).
    @Test(arguments: [(30, true), (31, false)])
    func nestingIsBounded(_ depth: Int, _ accepted: Bool) {
        let value = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        let text = String(decoding: Self.pin, as: UTF8.self).replacingOccurrences(
            of: #""count":2"#, with: #""count":\#(value)"#)
        let bytes = Array(text.utf8)
        #expect(((try? WireCodec.decode(AnyActivityEnvelope.self, from: bytes)) != nil) == accepted)
        #expect(((try? WireCodec.decodeWithJSONDecoder(AnyActivityEnvelope.self, from: bytes)) != nil) == accepted)
    }

    /// The fast path and JSONDecoder give the same envelope or both refuse, on the hostile corpus.
    @Test func theHostileCorpusIsReadAsJSONDecoderReadsIt() throws {
        var taken = 0
        for payload in HostileCorpus.cases().map(\.payload) + [Self.pin] {
            if WireJSONTests.fastPath(AnyActivityEnvelope.self, payload) { taken += 1 }
            let fast = try? WireCodec.decode(AnyActivityEnvelope.self, from: payload)
            let reference = try? WireCodec.decodeWithJSONDecoder(AnyActivityEnvelope.self, from: payload)
            #expect(fast == reference, "\(String(decoding: payload.prefix(200), as: UTF8.self))")
        }
        #expect(taken > 1)
    }
}
