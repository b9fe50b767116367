import Foundation

/// One JSON document to check with scripts/validate-json.py: the schema file it must pass (or fail).
public struct JSONSchemaCase: Sendable {
    /// The name printed in the script's result line.
    public var name: String
    /// The schema's file name in the schema directory, such as `status.json`.
    public var schema: String
    /// The document.
    public var data: Data
    /// Whether the schema must accept it.
    public var valid: Bool

    /// Creates a case.
    public init(name: String, schema: String, data: Data, valid: Bool) {
        self.name = name
        self.schema = schema
        self.data = data
        self.valid = valid
    }
}

/// The repository this package is built from (for its scripts and docs).
public let repositoryDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Checks `cases` with scripts/validate-json.py in one run, against the schemas in
/// `schemaDirectory` (docs/schema by default).
///
/// - Returns: the script's lines, one per case: `PASS` or `FAIL`, the name, expected and actual.
/// - Throws: `TestSupportError` when python3 or jsonschema is missing or the script cannot check.
public func validateJSON(_ cases: [JSONSchemaCase], schemaDirectory: String? = nil) async throws -> [Substring] {
    struct Entry: Encodable {
        let name: String
        let schema: String
        let instance: String
        let valid: Bool
    }
    let python = try executablePath("python3", package: "python3 python3-jsonschema")
    let script = repositoryDirectory.appendingPathComponent("scripts/validate-json.py").path
    let output = try await withTemporaryDirectory { directory in
        let folder = URL(fileURLWithPath: directory)
        var entries: [Entry] = []
        for (index, entry) in cases.enumerated() {
            let instance = "case-\(index + 1).json"
            try entry.data.write(to: folder.appendingPathComponent(instance))
            entries.append(Entry(name: entry.name, schema: entry.schema, instance: instance, valid: entry.valid))
        }
        let manifest = folder.appendingPathComponent("cases.json")
        try JSONEncoder().encode(["cases": entries]).write(to: manifest)
        return try await runProgram(
            python, [script] + (schemaDirectory.map { ["--schema-dir", $0] } ?? []) + [manifest.path])
    }
    return output.split(separator: "\n")
}
