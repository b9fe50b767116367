import AsyncSupport
import Foundation

/// The location sources' file reads: blocking calls, run off Swift's cooperative pool, one at a
/// time (a replay reads its file in order).
let fileReads = BlockingExecutor(label: "myeline.location.file")

/// A file read in chunks, so that a replay's memory does not grow with the file.
final class FileReader: Sendable {
    /// The size of one read: 256 KiB.
    static let chunkSize = 1 << 18

    /// The file.
    let path: String
    private let handle: FileHandle

    private init(path: String, handle: FileHandle) {
        self.path = path
        self.handle = handle
    }

    deinit {
        try? handle.close()
    }

    /// Opens a file for reading.
    ///
    /// - Throws: ``LocationError`` with code `.fileUnreadable`, naming the file and the reason.
    static func open(_ path: String) throws(LocationError) -> FileReader {
        do {
            return FileReader(path: path, handle: try FileHandle(forReadingFrom: URL(fileURLWithPath: path)))
        } catch {
            throw unreadable(path, error)
        }
    }

    /// Reads the next chunk, blocking; empty at the end of the file.
    func readBlocking() throws(LocationError) -> [UInt8] {
        do {
            return Array(try handle.read(upToCount: Self.chunkSize) ?? Data())
        } catch {
            throw Self.unreadable(path, error)
        }
    }

    /// Reads the next chunk off the cooperative pool; empty at the end of the file.
    func read() async throws(LocationError) -> [UInt8] {
        try await fileReads.run { [self] () throws(LocationError) in try readBlocking() }
    }

    private static func unreadable(_ path: String, _ error: any Error) -> LocationError {
        let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
        return LocationError(.fileUnreadable, "cannot read location file '\(path)': \(reason)")
    }
}
