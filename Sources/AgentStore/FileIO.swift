import FoundationEssentials

import Glibc

/// The blocking POSIX file operations the stores need, each mapped to an `AgentStoreError` that
/// names the file. Every function blocks the calling thread.
package enum FileIO {
    /// Opens `path` read-write, creating it with mode 0644 when `create` is set; returns the descriptor.
    package static func openFile(_ path: String, create: Bool) throws(AgentStoreError) -> Int32 {
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0)
        let fd = retryingInterrupts { open(path, flags, 0o644) }
        guard fd >= 0 else { throw .system("opening", path: path) }
        return fd
    }

    /// Closes a descriptor, ignoring errors: every write that matters was followed by `fsync`.
    package static func closeFile(_ fd: Int32) {
        _ = close(fd)
    }

    /// The length of the open file `fd` in bytes.
    static func length(_ fd: Int32, path: String) throws(AgentStoreError) -> Int {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system("reading the length of", path: path) }
        return Int(status.st_size)
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and interrupts.
    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(AgentStoreError) {
        let failure: Int32 = bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if written == 0 { return ENOSPC }
                done += written
            }
            return 0
        }
        if failure != 0 { throw .system("writing", path: path, errno: failure) }
    }

    /// Replaces `path` atomically: writes `path.tmp`, flushes it, renames it over `path` and
    /// flushes the directory, so a reader finds either the old content or the new, never a mix.
    ///
    /// Without `syncing` nothing is flushed: the rename still replaces the file whole for another
    /// process, and the kernel keeps it through the writer's crash, not through a power cut (for a
    /// file in memory, on tmpfs, where a flush would only cost system calls).
    package static func writeAtomically(_ bytes: [UInt8], to path: String, syncing: Bool = true) throws(AgentStoreError)
    {
        let temporary = path + ".tmp"
        let fd = try openFile(temporary, create: true)
        do {
            try truncate(fd, to: 0, path: temporary)
            try write(fd, bytes, at: 0, path: temporary)
            if syncing { try sync(fd, path: temporary) }
        } catch {
            closeFile(fd)
            try? removeFile(temporary)
            throw error
        }
        closeFile(fd)
        try renameFile(temporary, to: path)
        if syncing { try syncDirectory(parentDirectory(of: path)) }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    static func read(_ fd: Int32, count: Int, at offset: Int64, path: String) throws(AgentStoreError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = result.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system("reading", path: path)
            }
            if got == 0 { break }
            done += got
        }
        result.removeLast(count - done)
        return result
    }

    /// The whole content of an open file.
    package static func readAll(_ fd: Int32, path: String) throws(AgentStoreError) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system("inspecting", path: path) }
        return try read(fd, count: Int(info.st_size), at: 0, path: path)
    }

    /// Flushes a file's data and metadata to the storage device.
    static func sync(_ fd: Int32, path: String) throws(AgentStoreError) {
        guard retryingInterrupts({ fsync(fd) }) == 0 else { throw .system("syncing", path: path) }
    }

    /// Cuts a file to `size` bytes.
    static func truncate(_ fd: Int32, to size: Int64, path: String) throws(AgentStoreError) {
        guard retryingInterrupts({ ftruncate(fd, off_t(size)) }) == 0 else {
            throw .system("truncating", path: path)
        }
    }

    /// Flushes a directory, so that files created, renamed or removed in it survive a power cut.
    static func syncDirectory(_ path: String) throws(AgentStoreError) {
        let fd = retryingInterrupts { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw .system("opening directory", path: path) }
        defer { closeFile(fd) }
        try sync(fd, path: path)
    }

    /// Creates `path` and its missing parents as directories (mode 0755).
    package static func makeDirectory(_ path: String) throws(AgentStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw AgentStoreError(
                .io, "creating directory \(path) failed: \(error); make its parent writable by the agent's user")
        }
    }

    /// Renames `source` to `destination`, replacing it atomically if it exists.
    static func renameFile(_ source: String, to destination: String) throws(AgentStoreError) {
        guard rename(source, destination) == 0 else { throw .system("renaming to \(destination)", path: source) }
    }

    /// Removes a file; a file that is already gone is not an error.
    package static func removeFile(_ path: String) throws(AgentStoreError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .system("removing", path: path) }
    }

    /// Whether something exists at `path`.
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The names in a directory, without `.` and `..`.
    static func contents(of path: String) throws(AgentStoreError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw AgentStoreError(.io, "listing directory \(path) failed: \(error)")
        }
    }

    /// Renames a damaged `path` to `path.corrupt-YYYYMMDDTHHMMSSZ` (a counter added if taken) and
    /// flushes its directory; returns the new path.
    static func moveAside(_ path: String, now: Date = Date()) throws(AgentStoreError) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        func padded(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let stamp =
            padded(parts.year, 4) + padded(parts.month, 2) + padded(parts.day, 2) + "T" + padded(parts.hour, 2)
            + padded(parts.minute, 2) + padded(parts.second, 2) + "Z"
        var destination = "\(path).corrupt-\(stamp)"
        var counter = 1
        while exists(destination) {
            counter += 1
            destination = "\(path).corrupt-\(stamp)-\(counter)"
        }
        try renameFile(path, to: destination)
        try syncDirectory(parentDirectory(of: path))
        return destination
    }

    /// The directory that holds `path`: what precedes its last `/` ("." for a bare name, "/" for
    /// a name in the root), the directory to sync after a rename.
    static func parentDirectory(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    private static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

/// Little-endian fixed-width integers in byte arrays, for the on-disk formats.
extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func littleEndian<T: FixedWidthInteger>(_: T.Type = T.self, at offset: Int) -> T {
        var value = T.zero
        for index in 0..<MemoryLayout<T>.size {
            value |= T(self[offset + index]) << (8 * index)
        }
        return value
    }
}
