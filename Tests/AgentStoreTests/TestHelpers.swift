import AgentStore
import Foundation
import Locking
import Logging

/// A fresh directory under the system's temporary directory, removed after `body`.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = FileManager.default.temporaryDirectory.path + "/agentstore-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Log lines kept in memory, for tests that check what was logged: by event (docs/logging.md).
final class LogRecorder: Sendable {
    private let lines = Locked<[(level: Logger.Level, event: String)]>([])

    /// A logger whose lines this recorder keeps.
    var logger: Logger {
        Logger(label: "agentstore-tests") { _ in RecordingHandler(recorder: self) }
    }

    /// The events logged, in order; a line without one is recorded as `-`.
    var events: [String] {
        lines.withLock { $0.map(\.event) }
    }

    /// The events logged at `level` or above.
    func events(atLeast level: Logger.Level) -> [String] {
        lines.withLock { $0.filter { $0.level >= level }.map(\.event) }
    }

    fileprivate func record(_ level: Logger.Level, _ event: String) {
        lines.withLock { $0.append((level, event)) }
    }
}

private struct RecordingHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    func log(event: LogEvent) {
        recorder.record(event.level, event.metadata?["event"].map { "\($0)" } ?? "-")
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

/// The names in `directory`, sorted.
func contents(of directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// The payload of the `number`th test record.
func payload(_ number: Int) -> [UInt8] {
    Array("{\"seq\":\(number),\"latitude\":48.8584}".utf8)
}

/// A record to append: a topic and a payload.
struct Entry: OutboxContent {
    var topic: String
    var payload: [UInt8]

    init(_ topic: String, _ payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
    }
}
