import Foundation
import LiveActivity
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
            #expect(throws: Never.self, "docs/topics.md example \(index + 1) decodes") { try kind.decode(example) }
            add("docs/topics.md example \(index + 1)", kind, example, valid: true)
        }
        for payload in InvalidPayload.all where payload.schemaRejects {
            add("invalid: \(payload.name)", payload.kind, try #require(payload.data), valid: false)
        }

        let lines = try await validateJSON(cases)
        let output = lines.joined(separator: "\n")
        #expect(lines.count == cases.count, "one result line per case:\n\(output)")
        for line in lines where !line.hasPrefix("PASS\t") { Issue.record("unexpected result: \(line)") }
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
