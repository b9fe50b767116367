import Locking

/// What the agent reports about itself in its status beside `online`: why it cannot save to its
/// state directory now, if it cannot, and how far its clock is from its receiver's time, if they
/// disagree. Set by the control loop, read by ``Presence``.
final class AgentHealth: Sendable {
    /// The longest `storage-error` the status carries (its schema's limit).
    static let maximumErrorLength = 1024

    /// The figures of the status.
    struct Report: Hashable, Sendable {
        var storageError: String?
        var clockOffset: Int?
    }

    private let report = Locked(Report())

    /// The figures as they stand.
    var current: Report { report.withLock { $0 } }

    /// Records why saving fails (nil: it works again); returns whether that changed from failing
    /// to working or back, so that the status is published again only then.
    func setStorageError(_ error: String?) -> Bool {
        let bounded = error.map { String($0.prefix(Self.maximumErrorLength)) }
        return report.withLock { report in
            defer { report.storageError = bounded }
            return (report.storageError == nil) != (bounded == nil)
        }
    }

    /// Records the clock's offset from the receiver (nil: they agree).
    func setClockOffset(_ offset: Int?) {
        report.withLock { $0.clockOffset = offset }
    }
}
