import AsyncSupport

import Glibc

/// The location sources' file reads: blocking calls, run off Swift's cooperative pool, one at a
/// time (a replay reads its file in order).
let fileReads = BlockingExecutor(name: "file-reads")

/// A file read in chunks, so that a replay's memory does not grow with the file.
final class FileReader: Sendable {
    /// The size of one read: 256 KiB.
    static let chunkSize = 1 << 18

    /// The file.
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Opens a file for reading.
    ///
    /// - Throws: ``LocationError`` with code `.fileUnreadable`, naming the file and the reason.
    static func open(_ path: String) throws(LocationError) -> FileReader {
        let descriptor = retryingInterrupts { openForReading(path) }
        guard descriptor >= 0 else { throw unreadable(path, errno) }
        return FileReader(path: path, descriptor: descriptor)
    }

    /// Reads the next chunk, blocking; empty at the end of the file.
    func readBlocking() throws(LocationError) -> [UInt8] {
        var failure: Int32 = 0
        let chunk = [UInt8](unsafeUninitializedCapacity: Self.chunkSize) { buffer, count in
            let read = retryingInterrupts { readBytes(descriptor, buffer.baseAddress, Self.chunkSize) }
            if read < 0 { failure = errno }
            count = max(0, read)
        }
        if failure != 0 { throw Self.unreadable(path, failure) }
        return chunk
    }

    /// Reads the next chunk off the cooperative pool; empty at the end of the file.
    func read() async throws(LocationError) -> [UInt8] {
        try await fileReads.run { [self] () throws(LocationError) in try readBlocking() }
    }

    private static func unreadable(_ path: String, _ code: Int32) -> LocationError {
        LocationError(.fileUnreadable, "cannot read location file '\(path)': \(String(cString: strerror(code)))")
    }
}

/// Reads a whole file, blocking: for a command's own small inputs (`simulate --track`); a
/// source reads through ``FileReader/read()``, off the cooperative pool.
///
/// - Throws: ``LocationError`` with code `.fileUnreadable`, naming the file and the reason.
public func readWholeFile(_ path: String) throws(LocationError) -> [UInt8] {
    let reader = try FileReader.open(path)
    var bytes: [UInt8] = []
    while true {
        let chunk = try reader.readBlocking()
        if chunk.isEmpty { return bytes }
        bytes += chunk
    }
}

/// open(2) for reading, close-on-exec; named apart from ``FileReader/open(_:)``.
private func openForReading(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}

/// read(2), named apart from ``FileReader/read()``.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Calls `call` again while it fails with EINTR (a signal arrived during the call).
private func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
