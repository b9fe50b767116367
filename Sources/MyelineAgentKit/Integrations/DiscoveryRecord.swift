import FoundationEssentials
import Logging

/// The Home Assistant discovery topics the agent published, one per line in
/// `STATE-DIRECTORY/homeassistant-topics`: with it, a start with the option off (or another
/// prefix) removes exactly what an earlier run published, and nothing when it never published.
struct DiscoveryRecord {
    let path: String

    init(stateDirectory: String) {
        path = URL(fileURLWithPath: stateDirectory).appendingPathComponent("homeassistant-topics").path
    }

    /// The recorded topics; none when there is no record or it cannot be read (logged).
    func topics(logger: Logger) -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        } catch {
            logger.warning(
                "Cannot read the Home Assistant discovery record",
                metadata: ["error": "\(error)", "file.path": "\(path)"])
            return []
        }
    }

    /// Records `topics`; an empty list removes the record.
    func save(_ topics: [String]) throws {
        if topics.isEmpty {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            return
        }
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data((topics.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
