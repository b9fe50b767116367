import Foundation
import MyelineConfiguration
import Testing

@testable import Aggregator
@testable import MyelineAgentKit

/// Each executable's keys are read and documented (issue 21 item 4): the keys its configuration
/// reading asks for are exactly its schema's; each is in the tables of its page in docs/ and in
/// the tables of the doc comments of the code that reads it, and those tables name no other key.
struct ConfigurationKeyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The names in backquotes in the `Key` column of every table of a Markdown page, or in the
    /// first column of the tables of a Swift file's doc comments; wildcards (`mqtt.*`) left out.
    static func documentedKeys(_ path: String) throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let swift = path.hasSuffix(".swift")
        var keys: Set<String> = []
        var column: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var row = line.trimmingCharacters(in: .whitespaces)
            if swift {
                guard row.hasPrefix("/// |") else { continue }
                row = String(row.dropFirst(4))
            }
            guard row.hasPrefix("|") else {
                column = nil
                continue
            }
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let index = column else {
                column = swift ? 0 : cells.firstIndex(of: "Key")
                continue
            }
            guard index < cells.count else { continue }
            for (offset, part) in cells[index].split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where offset % 2 == 1 && !part.contains("*") && !part.hasPrefix("-") {
                keys.insert(String(part))
            }
        }
        keys.remove("Key")
        return keys
    }

    static let agentKeys = Set(ConfigurationKey.agentSchema.keys.map(\.name))
    static let aggregatorKeys = Set(AggregatorConfiguration.schema.keys.map(\.name))

    @Test func theSchemasNameEachKeyOnce() {
        #expect(Self.agentKeys.count == ConfigurationKey.agentSchema.keys.count)
        #expect(Self.aggregatorKeys.count == AggregatorConfiguration.schema.keys.count)
    }

    /// With `device.id` given, the agent reads every key of its schema, and no other.
    @Test func theAgentReadsEveryKeyOfItsSchema() async throws {
        let loaded = try await AgentConfigurationTests.load(flags: ["device.id": "v"])
        #expect(loaded.sources.keysRead == Self.agentKeys)
    }

    /// With `web.listen` given (the map's other keys are read only then), the aggregator reads
    /// every key of its schema, and no other.
    @Test func theAggregatorReadsEveryKeyOfItsSchema() async throws {
        let layers = try await LayeredConfiguration(
            flags: ["web.listen": "8080"], file: nil, environment: [:], defaultFile: "/nonexistent/aggregator.yaml",
            schema: AggregatorConfiguration.schema)
        _ = try AggregatorConfiguration(layers: layers, environment: [:])
        #expect(layers.sources.keysRead == Self.aggregatorKeys)
    }

    @Test func theAgentsKeysAreDocumented() throws {
        #expect(try Self.documentedKeys("docs/configuration.md") == Self.agentKeys)
        let code = try Self.documentedKeys("Sources/MyelineAgentKit/Configuration/AgentConfiguration+Reader.swift")
            .union(
                try Self.documentedKeys("Sources/MyelineAgentKit/Configuration/AgentConfiguration+Integrations.swift"))
        #expect(code == Self.agentKeys)
    }

    @Test func theAggregatorsKeysAreDocumented() throws {
        let pages = try Self.documentedKeys("docs/aggregator.md").union(try Self.documentedKeys("docs/web.md"))
        #expect(pages == Self.aggregatorKeys)
        let code = try Self.documentedKeys("Sources/Aggregator/AggregatorConfiguration.swift")
            .union(try Self.documentedKeys("Sources/MyelineConfiguration/MQTTSettings.swift"))
            .union(try Self.documentedKeys("Sources/AggregatorWeb/WebSettings.swift"))
        #expect(code == Self.aggregatorKeys)
    }

    /// The reader of the tables finds what it should: a key missing from a page fails the tests above.
    @Test func theTablesAreRead() throws {
        let page = try Self.documentedKeys("docs/configuration.md")
        #expect(page.contains("alerts.geofences") && page.contains("homeassistant.prefix"))
        #expect(!page.contains("MYELINE_DEVICE_ID"))
        let aggregator = try Self.documentedKeys("docs/aggregator.md")
        #expect(aggregator.contains("mqtt.tls.key-file") && !aggregator.contains("--broker"))
    }
}
