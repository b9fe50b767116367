import FoundationEssentials

/// Beside a journal: whether the last run stopped cleanly, and how many power losses the state
/// directory has seen, so that a loss the durability bound allows is said, not silent.
///
/// Two small files in `directory`: `running`, from ``begin()`` to ``endCleanly()`` (a start that
/// finds it follows a stop without a clean shutdown: a crash, SIGKILL or a power cut), and
/// `power-losses`, a decimal count. Each change is flushed: one write and flush at a start and one
/// at a clean stop, never per fix. Blocks on I/O.
public struct RunLedger: Sendable {
    /// The directory holding the two files (the agent's state directory).
    public let directory: String

    /// A ledger in `directory`, which must exist.
    public init(directory: String) {
        self.directory = directory
    }

    private var runningPath: String { directory + "/running" }
    private var countPath: String { directory + "/power-losses" }

    /// The power losses counted so far (0 when none, or when the file cannot be read).
    public var powerLosses: UInt64 {
        (try? String(contentsOfFile: countPath, encoding: .utf8)).flatMap { text in
            let fields = text.split(whereSeparator: \.isWhitespace)
            return fields.count == 1 ? UInt64(fields[0]) : nil
        } ?? 0
    }

    /// Records that a run begins, durably; returns whether the run before it stopped without a
    /// clean shutdown (``endCleanly()`` was not reached).
    ///
    /// - Throws: `AgentStoreError` when the marker cannot be written.
    public func begin() throws(AgentStoreError) -> Bool {
        let unclean = FileIO.exists(runningPath)
        if !unclean { try FileIO.writeAtomically([], to: runningPath) }
        return unclean
    }

    /// Counts one more power loss, durably; returns the new count.
    ///
    /// - Throws: `AgentStoreError` when the count cannot be written.
    @discardableResult
    public func countPowerLoss() throws(AgentStoreError) -> UInt64 {
        let count = powerLosses + 1
        try FileIO.writeAtomically(Array("\(count)\n".utf8), to: countPath)
        return count
    }

    /// Records that the run stopped cleanly, durably.
    ///
    /// - Throws: `AgentStoreError` when the marker cannot be removed.
    public func endCleanly() throws(AgentStoreError) {
        guard FileIO.exists(runningPath) else { return }
        try FileIO.removeFile(runningPath)
        try FileIO.syncDirectory(directory)
    }
}
