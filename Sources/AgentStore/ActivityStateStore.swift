import FoundationEssentials
import Logging

/// Keeps the agent's current activity in one file of the state directory, replaced atomically.
///
/// The file is `MYACTST1`, the JSON body's length (UInt32 LE), its CRC-32 (UInt32 LE) and the
/// JSON encoding of a `PersistedActivity`. `save` writes `FILE.tmp`, flushes it, renames it over
/// the file and flushes the directory: after a crash or power cut the file holds either the
/// previous record or the new one, never a mix.
///
/// Every method is **synchronous and blocks the calling thread** on file I/O and `fsync`; call it
/// from a dedicated thread or executor, not from a task on Swift's cooperative pool. The store
/// holds no open file and no mutable state, so it is `Sendable`; concurrent `save`s of the same
/// file are the caller's to serialise.
public struct ActivityStateStore<Attributes: Codable & Sendable>: Sendable {
    /// The file the activity is kept in.
    public let path: String
    private let logger: Logger

    private static var magic: [UInt8] { Array("MYACTST1".utf8) }
    private static var headerSize: Int { 16 }

    /// A store for the file `fileName` (default `activity.state`) in `directory`; nothing is read
    /// or created until the first `load` or `save`.
    public init(directory: String, fileName: String = "activity.state", logger: Logger) {
        self.path = directory + "/" + fileName
        self.logger = logger
    }

    /// The saved activity, or nil when there is none.
    ///
    /// A damaged file (bad header, bad checksum, JSON that does not decode as this `Attributes`)
    /// is renamed `FILE.corrupt-TIMESTAMP` with one warning, and nil is returned. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.io` when the file exists but cannot be read or moved aside.
    public func load() throws(AgentStoreError) -> PersistedActivity<Attributes>? {
        guard FileIO.exists(path) else { return nil }
        let fd = try FileIO.openFile(path, create: false)
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readAll(fd, path: path)
        } catch {
            FileIO.closeFile(fd)
            throw error
        }
        FileIO.closeFile(fd)
        switch Self.decode(bytes) {
        case .success(let activity):
            return activity
        case .failure(let reason):
            let aside = try FileIO.moveAside(path)
            logger.info(
                "The saved activity was damaged and was moved aside; starting without one",
                metadata: [
                    "event": "store.activity.damaged", "file.path": "\(path)", "store.reason": "\(reason.text)",
                    "file.moved_to": "\(aside)",
                ])
            return nil
        }
    }

    /// Replaces the saved activity atomically; with `durable` (the default) it is on the storage
    /// device when this returns, without it only in the kernel's hands (it survives the process,
    /// not a power cut: for a store in memory, on tmpfs).
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when the attributes do not encode as JSON or a
    ///   date is not finite, `.diskFull` or `.io` when the file cannot be written; the previous
    ///   record then stays.
    public func save(_ activity: PersistedActivity<Attributes>, durable: Bool = true) throws(AgentStoreError) {
        try write(Self.encode(activity, paddedTo: 0), durable: durable)
    }

    /// Writes a record's file bytes atomically, flushed when `durable`.
    private func write(_ bytes: [UInt8], durable: Bool) throws(AgentStoreError) {
        let directory = FileIO.parentDirectory(of: path)
        if !FileIO.exists(directory) { try FileIO.makeDirectory(directory) }
        try FileIO.writeAtomically(bytes, to: path, syncing: durable)
    }

    /// The file's bytes for `activity`: the header, then the JSON body, padded with spaces (JSON
    /// whitespace, inside the checksum) to `length` bytes in all when it is shorter
    /// (``ActivityRecordFiles`` writes over a longer record in place). The body is written directly
    /// (``PersistedActivity/directJSON(attributesJSON:)``), around `attributesJSON`, the attributes'
    /// JSON when the caller has it (``ActivityRecordEncoder``), else encoded here.
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when the attributes do not encode as JSON or a
    ///   date is not finite.
    static func encode(
        _ activity: PersistedActivity<Attributes>, attributesJSON: [UInt8]? = nil, paddedTo length: Int
    ) throws(AgentStoreError) -> [UInt8] {
        let attributes: [UInt8]
        if let attributesJSON { attributes = attributesJSON } else { attributes = try activity.attributesJSON() }
        guard let body = activity.directJSON(attributesJSON: attributes) else {
            throw AgentStoreError(
                .encoding,
                "the activity \(activity.activityID) could not be encoded as JSON: its start or dismissal date"
                    + " is not a finite time")
        }
        return file(body: body, paddedTo: length)
    }

    /// The file's bytes around a record's JSON `body`: the header, then the body padded with spaces
    /// to `length` bytes in all when it is shorter.
    static func file(body: [UInt8], paddedTo length: Int) -> [UInt8] {
        var body = body
        if headerSize + body.count < length {
            body.append(contentsOf: repeatElement(UInt8(ascii: " "), count: length - headerSize - body.count))
        }
        var bytes = Self.magic
        bytes.reserveCapacity(headerSize + body.count)
        bytes.appendLittleEndian(UInt32(body.count))
        bytes.appendLittleEndian(CRC32.checksum(body))
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Removes the saved activity (after it ended), durably unless `durable` is false; nothing to
    /// remove is not an error.
    ///
    /// - Throws: `AgentStoreError` with `.io` when the file cannot be removed.
    public func remove(durable: Bool = true) throws(AgentStoreError) {
        guard FileIO.exists(path) else { return }
        try FileIO.removeFile(path)
        if durable { try FileIO.syncDirectory(FileIO.parentDirectory(of: path)) }
    }

    /// The extension of the files ``loadAll(directory:logger:)`` reads.
    public static var fileExtension: String { "state" }

    /// The store of activity `activityID` in `directory`: the file `ACTIVITY.state`.
    public init(directory: String, activityID: String, logger: Logger) {
        self.init(directory: directory, fileName: activityID + "." + Self.fileExtension, logger: logger)
    }

    /// Every activity saved in `directory` (one `*.state` file each), by activity id; damaged files
    /// are moved aside as ``load()`` does. A missing directory holds none. Blocks on I/O.
    ///
    /// - Throws: `AgentStoreError` with `.io` when the directory or a file cannot be read.
    public static func loadAll(directory: String, logger: Logger) throws(AgentStoreError) -> [PersistedActivity<
        Attributes
    >] {
        guard FileIO.exists(directory) else { return [] }
        var activities: [PersistedActivity<Attributes>] = []
        for name in try FileIO.contents(of: directory).sorted() where name.hasSuffix("." + fileExtension) {
            if let activity = try Self(directory: directory, fileName: name, logger: logger).load() {
                activities.append(activity)
            }
        }
        return activities
    }

    /// Why a file's bytes are not a record.
    struct Damage: Error {
        var text: String
    }

    /// The record in a file's bytes, read with `JSONDecoder`: what every agent wrote, before and
    /// after its record was written without `JSONEncoder`.
    static func decode(_ bytes: [UInt8]) -> Result<PersistedActivity<Attributes>, Damage> {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic else {
            return .failure(Damage(text: "no valid header"))
        }
        let length = Int(bytes.littleEndian(UInt32.self, at: 8))
        guard bytes.count == headerSize + length else {
            return .failure(Damage(text: "\(bytes.count - headerSize) bytes of body where the header says \(length)"))
        }
        let body = bytes[headerSize...]
        guard CRC32.checksum(body) == bytes.littleEndian(UInt32.self, at: 12) else {
            return .failure(Damage(text: "checksum mismatch"))
        }
        do {
            return .success(try JSONDecoder().decode(PersistedActivity<Attributes>.self, from: Data(body)))
        } catch {
            return .failure(Damage(text: "JSON does not decode: \(error)"))
        }
    }
}

extension ActivityStateStore where Attributes: Equatable {
    /// Replaces the saved activity atomically, as ``save(_:durable:)`` does, with `encoder`, which
    /// keeps the attributes' JSON from one save of the activity to the next: a store saved again
    /// and again (the agent's journal, at every commit) encodes them once.
    ///
    /// - Throws: `AgentStoreError`, as ``save(_:durable:)`` does.
    public func save(
        _ activity: PersistedActivity<Attributes>, durable: Bool = true,
        encoder: inout ActivityRecordEncoder<Attributes>
    ) throws(AgentStoreError) {
        try write(encoder.encode(activity), durable: durable)
    }
}
