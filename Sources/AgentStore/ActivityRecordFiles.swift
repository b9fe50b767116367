import FoundationEssentials
import Locking
import Logging

/// The activity records of a store in memory (the agent's spool, on tmpfs), each written over its
/// file in place with one `pwrite` of its descriptor, kept open between saves: the spool saves the
/// record of every running activity at every fix, and replacing the file (``FileIO/writeAtomically(_:to:syncing:)``:
/// access, open, truncate, write, close, rename, and a new inode each time) was six calls a fix
/// and the most costly work of the spool's thread but the encoding (issue 24).
///
/// **Durability**: the process, not the power. A record is padded with spaces (JSON whitespace,
/// inside its checksum) to the file's length, so the file never shrinks and needs no truncation:
/// one write of at most ``maximumInPlaceSize`` bytes at offset 0, within the file's first page,
/// which the kernel copies whole or not at all when the process dies (a fatal signal is only
/// acted on between pages). A power cut loses the memory the file is in anyway. A record larger
/// than that is saved as ``ActivityStateStore/save(_:durable:)`` saves it, renamed over the file,
/// whose descriptor is then let go. For a store on a storage device, use ``ActivityStateStore``.
///
/// **Encoding**: each record is written without `JSONEncoder` (``ActivityRecordEncoder``), which
/// encodes an activity's attributes once and reuses their JSON while they stay equal: the bytes
/// are those `JSONEncoder` gave, and ``ActivityStateStore`` reads them as before.
///
/// Every method blocks the calling thread on file I/O; calls are serialised by a lock.
public final class ActivityRecordFiles<Attributes: Codable & Equatable & Sendable>: Sendable {
    /// The largest record written in place: a page, the smallest there is (4 KiB).
    public static var maximumInPlaceSize: Int { 4096 }

    private let directory: String
    private let logger: Logger
    /// An activity's file, kept open, with its length and the encoder of its records.
    private struct OpenFile: Sendable {
        var fd: Int32
        /// The file's path, for what an error says.
        let path: String
        var length: Int
        var encoder = ActivityRecordEncoder<Attributes>()
    }

    /// The open file of each activity.
    private let files = Locked([String: OpenFile]())

    /// The records of `directory` (`ACTIVITY.state` files, as ``ActivityStateStore`` names them).
    public init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    deinit {
        closeAll()
    }

    /// Replaces `activity`'s record: in place when it fits a page, else atomically (not flushed).
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when the attributes do not encode as JSON or a
    ///   date is not finite, `.diskFull` or `.io` when the file cannot be written; then its
    ///   descriptor is let go, and the next save opens it again.
    public func save(_ activity: PersistedActivity<Attributes>) throws(AgentStoreError) {
        let id = activity.activityID
        // Made only when a file is opened or written whole: its path cost more than the record's write.
        func store() -> ActivityStateStore<Attributes> {
            ActivityStateStore<Attributes>(directory: directory, activityID: id, logger: logger)
        }
        try files.withLock { (files) throws(AgentStoreError) in
            var file = files.removeValue(forKey: id)
            do throws(AgentStoreError) {
                if file == nil {
                    if !FileIO.exists(directory) { try FileIO.makeDirectory(directory) }
                    let path = store().path
                    let fd = try FileIO.openFile(path, create: true)
                    do throws(AgentStoreError) {
                        file = OpenFile(fd: fd, path: path, length: try FileIO.length(fd, path: path))
                    } catch {
                        FileIO.closeFile(fd)
                        throw error
                    }
                }
                guard var open = file else { return }
                let bytes = try open.encoder.encode(activity, paddedTo: open.length)
                guard bytes.count <= Self.maximumInPlaceSize else {
                    FileIO.closeFile(open.fd)
                    file = nil
                    try store().save(activity, durable: false)
                    return
                }
                try FileIO.write(open.fd, bytes, at: 0, path: open.path)
                open.length = bytes.count
                files[id] = open
            } catch {
                if let file { FileIO.closeFile(file.fd) }
                throw error
            }
        }
    }

    /// Removes `activityID`'s record (after it ended); nothing to remove is not an error.
    ///
    /// - Throws: `AgentStoreError` with `.io` when the file cannot be removed.
    public func remove(activityID: String) throws(AgentStoreError) {
        if let file = files.withLock({ $0.removeValue(forKey: activityID) }) { FileIO.closeFile(file.fd) }
        try ActivityStateStore<Attributes>(directory: directory, activityID: activityID, logger: logger)
            .remove(durable: false)
    }

    /// Lets every descriptor go (the records stay).
    public func closeAll() {
        let open = files.withLock { files in
            defer { files.removeAll() }
            return files.values.map(\.fd)
        }
        for fd in open { FileIO.closeFile(fd) }
    }
}
