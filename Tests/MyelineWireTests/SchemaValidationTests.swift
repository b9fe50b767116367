import Foundation
import LiveActivity
import MyelineWire
import TestSupport
import Testing

/// The JSON Schemas in docs/schema agree with the Swift codec: they accept every payload the
/// encoder writes and every example in docs/topics.md, and reject the hand-made broken payloads.
/// All cases go through scripts/validate-json.py in one run; CI installs python3 and jsonschema,
/// so their absence fails the test.
@Suite("JSON Schemas", .timeLimit(.minutes(1)))
struct SchemaValidationTests {
    static let repository = repositoryDirectory

    @Test("the schemas accept the encoder's payloads and the documented examples, and reject broken ones")
    func schemas() async throws {
        var cases: [JSONSchemaCase] = []
        func add(_ name: String, _ kind: PayloadKind, _ data: Data, valid: Bool) {
            cases.append(JSONSchemaCase(name: name, schema: kind.schemaFile, data: data, valid: valid))
        }
        for sample in try await WireSample.all() {
            add(
                "encoded \(sample.name)", try #require(sample.kind, "\(sample.name) has a schema file"), sample.data,
                valid: true)
        }
        let examples = try Self.documentedExamples()
        #expect(!examples.isEmpty, "docs/topics.md has ```json examples")
        for (index, example) in examples.enumerated() {
            let kind = try #require(Self.kind(of: example), "docs/topics.md example \(index + 1) names a known schema")
            #expect(throws: Never.self, "docs/topics.md example \(index + 1) decodes") {
                try Self.decode(example, as: kind)
            }
            add("docs/topics.md example \(index + 1)", kind, example, valid: true)
        }
        for payload in InvalidPayload.all where payload.schemaRejects {
            add("invalid: \(payload.name)", payload.kind, try #require(payload.data), valid: false)
        }
        for (name, data, valid) in try await Self.otherTypeEnvelopes() {
            add(name, .envelope, data, valid: valid)
        }

        let lines = try await validateJSON(cases)
        let output = lines.joined(separator: "\n")
        #expect(lines.count == cases.count, "one result line per case:\n\(output)")
        for line in lines where !line.hasPrefix("PASS\t") { Issue.record("unexpected result: \(line)") }
    }

    /// Envelopes of an attributes type the schema does not register (`com.example.pin`): those the
    /// library encodes are valid (every one failed when the schema took only `location`), and
    /// broken ones are still rejected by the envelope's own rules.
    static func otherTypeEnvelopes() async throws -> [(String, Data, Bool)] {
        let (center, clock) = Fixtures.center()
        let content = ActivityContent(state: PinAttributes.ContentState(count: 1, note: "one pallet"), staleDate: nil)
        let pin = try center.request(attributes: PinAttributes(label: "Loading bay 3"), content: content, id: "pin-1")
        let events = pin.events
        clock.advance(by: 30)
        try pin.update(
            ActivityContent(
                state: PinAttributes.ContentState(count: 2, note: "two pallets waiting"),
                staleDate: Fixtures.t0 + 600, relevanceScore: 10),
            alertConfiguration: AlertConfiguration(title: "Pallets", body: "Two waiting"))
        try pin.end(nil, dismissalPolicy: .immediate)
        var cases: [(String, Data, Bool)] = []
        for event in await events.first(3) {
            let envelope = try #require(ActivityEnvelope(event: event, device: try Fixtures.device()))
            cases.append(
                ("encoded com.example.pin \(envelope.header.event.rawValue)", try WireCodec.encode(envelope), true))
        }
        let start = String(decoding: cases[0].1, as: UTF8.self)
        func broken(_ name: String, _ target: String, _ replacement: String) throws -> (String, Data, Bool) {
            let range = try #require(start.range(of: target), "\(target) is in \(start)")
            return (
                "invalid: com.example.pin \(name)", Data(start.replacingCharacters(in: range, with: replacement).utf8),
                false
            )
        }
        cases += [
            try broken(
                "attributes not an object", #""attributes":{"label":"Loading bay 3"}"#, #""attributes":"bay 3""#),
            try broken(
                "content-state an array", #""content-state":{"count":1,"note":"one pallet"}"#, #""content-state":[1]"#),
            try broken("without seq", #","seq":1"#, ""),
            try broken(
                "dismissal-date on a start", #""event":"start""#, #""dismissal-date":1700000000,"event":"start""#),
            try broken(
                "type in capitals", #""attributes-type":"com.example.pin""#, #""attributes-type":"Com.Example.Pin""#),
        ]
        return cases
    }

    /// Decodes a documented example: envelopes of `location` in full, those of a type the
    /// library does not know by their header, as a consumer that does not know the type reads them.
    static func decode(_ example: Data, as kind: PayloadKind) throws {
        if kind == .envelope, try WireCodec.decode(EnvelopeHeader.self, from: example).attributesType != "location" {
            return
        }
        try kind.decode(example)
    }

    /// The bodies of the ```json blocks in docs/topics.md.
    static func documentedExamples() throws -> [Data] {
        let page = try String(contentsOf: repository.appendingPathComponent("docs/topics.md"), encoding: .utf8)
        var examples: [Data] = []
        var block: [Substring]?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            switch (block, line) {
            case (nil, "```json"): block = []
            case (let lines?, "```"):
                examples.append(Data(lines.joined(separator: "\n").utf8))
                block = nil
            case (var lines?, _):
                lines.append(line)
                block = lines
            case (nil, _): break
            }
        }
        return examples
    }

    /// The payload kind named by an example's `schema` key.
    static func kind(of example: Data) -> PayloadKind? {
        let object = try? JSONSerialization.jsonObject(with: example) as? [String: Any]
        return (object?["schema"] as? String).flatMap(PayloadKind.init(schema:))
    }
}
