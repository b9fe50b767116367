import AgentStore
import AsyncSupport
import FoundationEssentials
import Logging

/// The Home Assistant discovery topics the agent published, one per line in
/// `STATE-DIRECTORY/homeassistant-topics`: with it, a start with the option off (or another
/// prefix) removes exactly what an earlier run published, and nothing when it never published.
///
/// Read and written on the state directory's blocking executor (the agent's journal's), never on
/// the cooperative pool, and written the one way the agent writes a file whole:
/// `FileIO.writeAtomically`, flushed, so that a power cut leaves the old list or the new one.
struct DiscoveryRecord {
    let directory: String
    let path: String
    /// Where its file calls run: the one executor of the state directory's files.
    let files: BlockingExecutor

    init(stateDirectory: String, files: BlockingExecutor) {
        directory = stateDirectory
        self.files = files
        path = URL(fileURLWithPath: stateDirectory).appendingPathComponent("homeassistant-topics").path
    }

    /// The recorded topics; none when there is no record or it cannot be read (logged).
    func topics(logger: Logger) async -> [String] {
        let path = path
        let read = await files.run { () -> Result<[UInt8], AgentStoreError>? in
            guard FileIO.exists(path) else { return nil }
            do throws(AgentStoreError) {
                let fd = try FileIO.openFile(path, create: false)
                defer { FileIO.closeFile(fd) }
                return .success(try FileIO.readAll(fd, path: path))
            } catch {
                return .failure(error)
            }
        }
        switch read {
        case nil:
            return []
        case .success(let bytes):
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        case .failure(let error):
            logger.warning(
                "Cannot read the Home Assistant discovery record",
                metadata: ["event": "homeassistant.record.unreadable", "error": "\(error)", "file.path": "\(path)"])
            return []
        }
    }

    /// Records `topics`; an empty list removes the record.
    ///
    /// - Throws: `AgentStoreError` naming the file and the system's reason.
    func save(_ topics: [String]) async throws(AgentStoreError) {
        let (directory, path) = (directory, path)
        try await files.run { () throws(AgentStoreError) in
            if topics.isEmpty {
                try FileIO.removeFile(path)
                return
            }
            try FileIO.makeDirectory(directory)
            try FileIO.writeAtomically(Array((topics.joined(separator: "\n") + "\n").utf8), to: path)
        }
    }
}
