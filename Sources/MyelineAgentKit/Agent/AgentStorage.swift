import AgentCore
import AgentStore
import AsyncSupport
import FoundationEssentials
import LiveActivity
import Locking
import Logging

/// The agent's storage, made for an SD card: track points and activities in two tiers
/// (docs/agent-store.md).
///
/// - **The spool** (`storage.spool-directory`, in memory: tmpfs) takes every accepted track point
///   and every change of an activity at once, without a flush: it survives the agent's crash and
///   SIGKILL, not a power cut, and costs the card nothing. The drainer delivers the points from it;
///   past ``spoolWindow`` points that the journal also has (a long outage), those leave the spool
///   and are delivered from the journal, so the memory it takes stays under a megabyte.
/// - **The journal** (`STATE-DIRECTORY/outbox` and `activities`, on the card) is written by a
///   group commit at most every `storage.sync-interval` (5 s by default), with one flush, and
///   only with what still matters then: the points not delivered yet (while the broker is
///   reachable, almost none: a point delivered before the commit is never written), the
///   activities' milestones (started, ended, paused), and sequence numbers reserved ahead
///   (``AgentStore/SeqReservation``), so that a number that reached the broker is never used
///   again after a power cut. Nothing to write, no write.
///
/// A power cut loses at most the points accepted in the last interval that were not delivered,
/// and a resumed activity's trip totals since its last milestone or reservation; the start after
/// it is counted (``AgentStore/RunLedger``) and said in the log and the status. With
/// `storage.durability: every-fix` there is no spool: every batch is written and flushed to the
/// journal before anything of it is published, as in Myeline's first version.
///
/// Every call runs on one of two threads, never on Swift's cooperative pool: the spool's (fast:
/// memory; the agent's ``AsyncSupport/EventLoop``, given to ``open(stateDirectory:spoolDirectory:durability:capacity:window:spoolExecutor:logger:)``)
/// and the journal's (flushes; a ``AsyncSupport/BlockingExecutor``), so that a group commit never
/// holds up a fix. A fix takes one call to the spool's: the drainer is handed the
/// points just appended in memory and takes their delivery in memory (``AgentStore/OutboxHandOff``);
/// the spool's cursor gets the delivery with the next append, or the next commit when no fix came.
final class AgentStorage: Sendable {
    typealias Record = AgentCore.Record

    /// What a power cut may lose (`storage.durability`).
    enum Durability: Hashable, Sendable {
        /// A group commit every this long: a power cut loses at most the points of the last interval
        /// not yet delivered.
        case interval(Duration)
        /// Every batch on the device before it is published: a power cut loses nothing.
        case everyFix

        /// The configuration's word: `interval` or `every-fix`.
        var keyValue: String {
            switch self {
            case .interval: "interval"
            case .everyFix: "every-fix"
            }
        }

        /// The group commit's interval; nil with every-fix.
        var syncInterval: Duration? {
            if case .interval(let interval) = self { interval } else { nil }
        }
    }

    /// A directory of track points (an outbox) and activity records.
    struct Tier: Sendable {
        /// The tier's directory.
        let directory: String
        let outbox: Outbox
        /// Where the activity records are: `TIER/activities`.
        let activities: String
        /// Whether its writes are flushed (the journal's are, the spool's are not).
        let durable: Bool
        /// The records written in place, kept open (the spool's: it outlives the process, not the
        /// power, and saves every running activity at every fix); nil for a durable tier.
        let recordFiles: ActivityRecordFiles<LocationActivityAttributes>?
        /// The encoder of each activity's record files, which keeps its attributes' JSON: the
        /// journal saves a running activity at every commit, and `JSONEncoder` for its
        /// attributes each time brought the encoder's code (hundreds of kilobytes of pages) back
        /// into memory (issue 24).
        let recordEncoders = Locked<[String: ActivityRecordEncoder<LocationActivityAttributes>]>([:])

        init(directory: String, outbox: Outbox, activities: String, durable: Bool, logger: Logger) {
            self.directory = directory
            self.outbox = outbox
            self.activities = activities
            self.durable = durable
            recordFiles = durable ? nil : ActivityRecordFiles(directory: activities, logger: logger)
        }

        func store(_ activityID: String, logger: Logger) -> ActivityStateStore<LocationActivityAttributes> {
            ActivityStateStore(directory: activities, activityID: activityID, logger: logger)
        }

        /// Saves an activity's record: in place in a tier in memory, else atomically and flushed.
        func save(_ record: Record, logger: Logger) throws(AgentStoreError) {
            if let recordFiles {
                try recordFiles.save(record)
            } else {
                try replace(record, logger: logger)
            }
        }

        /// Replaces an activity's record file atomically and flushes it (the journal's records, at
        /// each commit), with the attributes' JSON of its previous save.
        func replace(_ record: Record, logger: Logger) throws(AgentStoreError) {
            let id = record.activityID
            var encoder = recordEncoders.withLock { $0.removeValue(forKey: id) } ?? ActivityRecordEncoder()
            defer { recordEncoders.withLock { $0[id] = encoder } }
            try store(id, logger: logger).save(record, encoder: &encoder)
        }

        /// Removes an activity's record.
        func remove(_ activityID: String, logger: Logger) throws(AgentStoreError) {
            if let recordFiles {
                try recordFiles.remove(activityID: activityID)
            } else {
                try removeFile(activityID, logger: logger)
            }
        }

        /// Removes an activity's record file, durably.
        func removeFile(_ activityID: String, logger: Logger) throws(AgentStoreError) {
            recordEncoders.withLock { $0[activityID] = nil }
            try store(activityID, logger: logger).remove()
        }
    }

    let durability: Durability
    /// Where points are accepted and delivered from: the spool, or the journal with every-fix.
    let primary: Tier
    /// The journal, on the device (the same tier as `primary` with every-fix).
    let journal: Tier
    /// The spool's thread: the agent's event loop, which also runs the control loop, the
    /// drainer, the publisher and the gpsd link.
    let spoolExecutor: EventLoop
    let journalExecutor: BlockingExecutor
    let logger: Logger
    private let state: Locked<State>
    /// The spool's directory, removed at a clean close (the journal then has everything, exactly).
    let spoolDirectory: String?

    private struct State {
        /// Each activity's newest record, exact, as the spool has it.
        var latest: [String: Record] = [:]
        /// Each activity's record as the journal has it (its seqs are reservations).
        var journaled: [String: Record] = [:]
        var trackReservations: [String: SeqReservation] = [:]
        var envelopeReservations: [String: SeqReservation] = [:]
        /// Activities whose change must reach the journal at the next commit.
        var milestones: Set<String> = []
        /// Activities forgotten, to remove from the journal at the next commit.
        var removed: Set<String> = []
        /// The points just appended, handed to the drainer without a read, and the delivery the
        /// primary outbox's cursor does not have yet (recorded with the next call to it).
        var handOff = OutboxHandOff(capacity: AgentStorage.handOffCapacity)
        /// The primary index through which every point was delivered; nil before any.
        var delivered: UInt64? { handOff.delivered }
        /// Whether recording a delivery in the primary outbox failed last time (logged once).
        var recordingFails = false
        /// Whether a batch was persisted since the last commit: its append recorded the delivery.
        var persistedSinceCommit = false
        /// The primary index through which every point is in the journal or was delivered first.
        var journaledThrough: UInt64?
        /// The journal index of each point in the journal and not yet delivered, oldest first
        /// (by both indices). Those before the spool's head left the spool (``spoolWindow``) and
        /// are delivered from the journal.
        var mapping: [(primary: UInt64, journal: UInt64)] = []
        /// How many times the agent started after a stop that lost its spool without a clean close
        /// (a power cut), over the state directory's life.
        var powerLosses: UInt64 = 0
    }

    /// How many undelivered points the spool keeps (in memory: tmpfs) when the journal also has
    /// them: beyond it, at a commit, the points on the card leave the spool and are delivered
    /// from the journal. So a long outage costs the card its points, never the memory: 2,048
    /// points of about 400 bytes, under a megabyte.
    static let spoolWindow = 2_048

    /// How many records a segment file of the spool holds before the next is started: a long
    /// outage's spool (twice ``spoolWindow``) spans 5 segments, one open descriptor each, and the
    /// points that left it for the journal leave its memory with their segment (8,192 records,
    /// the journal's, kept up to 2.7 MB of them).
    static let spoolSegmentRecords = 1_024

    /// How many delivered records a segment of the spool keeps before the next append starts a
    /// new one and the delivered one is deleted: while the broker is reachable, the memory
    /// (tmpfs) of delivered points stays under 64 points of about 330 bytes, 21 KB.
    static let spoolDeliveredSegmentRecords = 64

    /// The spool's window in force (``spoolWindow``; smaller in tests).
    let window: Int

    /// How many of the points just appended are kept in memory for the drainer (``OutboxHandOff``):
    /// a drainer's batch (``OutboxDrainer/batchSize``), about 100 KiB.
    static let handOffCapacity = 256

    private init(
        durability: Durability, primary: Tier, journal: Tier, spoolDirectory: String?, window: Int, logger: Logger,
        state: State, spoolExecutor: EventLoop, journalExecutor: BlockingExecutor
    ) {
        self.durability = durability
        self.primary = primary
        self.journal = journal
        self.spoolDirectory = spoolDirectory
        self.window = window
        self.logger = logger
        self.state = Locked(state)
        self.spoolExecutor = spoolExecutor
        self.journalExecutor = journalExecutor
    }

    // MARK: Opening

    /// Opens the journal in `stateDirectory` and, with `.interval`, the spool in
    /// `spoolDirectory`, and recovers what an earlier run left.
    ///
    /// A spool of this boot (the agent crashed or was killed, the machine did not stop) is
    /// complete and exact: it is used, with the journal's points that had left it before it.
    /// Otherwise (a power cut, a reboot, the first start) the journal's records and undelivered
    /// points are taken, and a fresh spool goes on after them; the records' seqs are the
    /// reservations, so numbering goes on after them. A stop that lost the spool without a
    /// clean close is a power loss: logged, and counted (``State/powerLosses``).
    ///
    /// The spool's calls run on `spoolExecutor`, the agent's event loop.
    ///
    /// - Throws: `AgentStoreError` when a directory cannot be created or read.
    static func open(
        stateDirectory: String, spoolDirectory: String?, durability: Durability, capacity: Int,
        window: Int = spoolWindow, spoolExecutor: EventLoop, logger: Logger
    ) async throws -> AgentStorage {
        let journalExecutor = BlockingExecutor(name: "myeline-journal")
        let opened = try await journalExecutor.run { () throws -> (Tier, Tier, State) in
            try Self.recover(
                stateDirectory: stateDirectory, spoolDirectory: spoolDirectory, durability: durability,
                capacity: capacity, logger: logger)
        }
        let spool: String? = if case .interval = durability { spoolDirectory } else { nil }
        return AgentStorage(
            durability: durability, primary: opened.0, journal: opened.1, spoolDirectory: spool, window: window,
            logger: logger, state: opened.2, spoolExecutor: spoolExecutor, journalExecutor: journalExecutor)
    }

    private static func tier(
        _ directory: String, capacity: Int, durable: Bool, spool: Bool = false, firstIndex: UInt64 = 0, logger: Logger
    ) throws -> Tier {
        var configuration = OutboxConfiguration(
            capacity: capacity,
            // The spool (memory) never flushes; the journal flushes once per commit, itself
            // (with every-fix, at every append).
            syncPolicy: durable ? .everyAppend : spool ? .never : .batched(records: .max, interval: .seconds(1 << 40)),
            firstIndex: firstIndex)
        if spool {
            configuration.segmentRecordLimit = spoolSegmentRecords
            configuration.deliveredSegmentRecordLimit = spoolDeliveredSegmentRecords
        }
        let outbox = try Outbox(directory: directory + "/outbox", configuration: configuration, logger: logger)
        return Tier(
            directory: directory, outbox: outbox, activities: directory + "/activities", durable: durable,
            logger: logger)
    }

    /// In the spool: the journal's index less the spool's for the points of the last commit.
    private static func offsetFile(_ spoolDirectory: String) -> String { spoolDirectory + "/journal-offset" }

    private static func recover(
        stateDirectory: String, spoolDirectory: String?, durability: Durability, capacity: Int, logger: Logger
    ) throws -> (primary: Tier, journal: Tier, state: State) {
        var state = State()
        let ledger = RunLedger(directory: stateDirectory)
        state.powerLosses = ledger.powerLosses
        guard case .interval(let interval) = durability, let spoolDirectory else {
            let journal = try tier(stateDirectory, capacity: capacity, durable: true, logger: logger)
            for record in try ActivityStateStore<LocationActivityAttributes>.loadAll(
                directory: journal.activities, logger: logger)
            {
                state.latest[record.activityID] = record
                state.journaled[record.activityID] = record
            }
            return (journal, journal, state)
        }
        // The journal flushes at each commit: its outbox's appends are not flushed one by one.
        let journal = try tier(stateDirectory, capacity: capacity, durable: false, logger: logger)
        let journalRecords = try ActivityStateStore<LocationActivityAttributes>.loadAll(
            directory: journal.activities, logger: logger)
        for record in journalRecords { state.journaled[record.activityID] = record }
        let boot = Self.bootID()
        let marker = spoolDirectory + "/boot"
        let spoolIsCurrent =
            (try? String(contentsOfFile: marker, encoding: .utf8)).map { $0 == boot } ?? false
        if !spoolIsCurrent, FileManager.default.fileExists(atPath: spoolDirectory) {
            // A spool of another boot: what a power cut left of a spool that was not in memory.
            try FileManager.default.removeItem(atPath: spoolDirectory)
        }
        try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: true)
        // The journal's undelivered points.
        let pending = journal.outbox.indices
        let spool: Tier
        if spoolIsCurrent {
            spool = try tier(spoolDirectory, capacity: capacity, durable: false, spool: true, logger: logger)
            for record in try ActivityStateStore<LocationActivityAttributes>.loadAll(
                directory: spool.activities, logger: logger)
            {
                state.latest[record.activityID] = record
            }
            // Forgotten since the journal last heard of them.
            state.removed = Set(state.journaled.keys).subtracting(state.latest.keys)
            // The journal's points are those that left the spool, then copies of the spool's, at the
            // offset of the last commit; without one, all left it.
            let head = spool.outbox.indices.lowerBound
            let offset = (try? String(contentsOfFile: offsetFile(spoolDirectory), encoding: .utf8)).flatMap {
                Int64($0)
            }
            let copies =
                offset.map { UInt64(min(max(Int64(head) + $0, Int64(pending.lowerBound)), Int64(pending.upperBound))) }
                ?? pending.upperBound
            let left = UInt64(copies - pending.lowerBound)
            for index in pending.lowerBound..<copies {
                state.mapping.append((head - left + (index - pending.lowerBound), index))
            }
            if let offset {
                for index in copies..<pending.upperBound {
                    state.mapping.append((UInt64(Int64(index) - offset), index))
                }
            }
            state.journaledThrough = max(state.mapping.last?.primary ?? 0, head).checkedPredecessor.map {
                max($0, state.mapping.last?.primary ?? $0)
            }
        } else {
            if try ledger.begin() {
                state.powerLosses = try ledger.countPowerLoss()
                logger.warning(
                    "The agent stopped without a clean shutdown and its spool is gone (a power cut): the track points of the last storage.sync-interval that were not delivered before it may be lost; the seqs go on after those reserved, with a gap, never a repeat",
                    metadata: [
                        "event": "agent.power-loss",
                        "storage.sync-interval": "\(interval.inSeconds) s",
                        "storage.power-losses": "\(state.powerLosses)",
                    ])
            }
            for record in journalRecords { state.latest[record.activityID] = record }
            // A fresh spool whose indices go on after the journal's: the journal's points keep their
            // own, and are delivered from it.
            spool = try tier(
                spoolDirectory, capacity: capacity, durable: false, spool: true, firstIndex: pending.upperBound,
                logger: logger)
            state.mapping = pending.map { ($0, $0) }
            state.journaledThrough = pending.upperBound.checkedPredecessor
            try "0".write(toFile: offsetFile(spoolDirectory), atomically: true, encoding: .utf8)
        }
        try boot.write(toFile: marker, atomically: true, encoding: .utf8)
        _ = try ledger.begin()
        for (id, record) in state.latest {
            let journaled = state.journaled[id]
            state.trackReservations[id] = SeqReservation(
                durable: journaled?.trackSeq ?? 0, used: record.trackSeq)
            state.envelopeReservations[id] = SeqReservation(durable: journaled?.lastSeq ?? 0, used: record.lastSeq)
        }
        return (spool, journal, state)
    }

    /// This boot's id: a spool of the same boot survived a crash of the agent, not a power cut.
    private static func bootID() -> String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? "unknown")
            .filter { !$0.isWhitespace }
    }

    /// What an earlier run left: its activities' records, the newest `tail` points not yet
    /// delivered (their seqs may be ahead of the records) and the count of points dropped when
    /// the outbox was full. A failure is logged and reads as nothing saved.
    func load(tail: Int) async -> (saved: [Record], outboxTail: [OutboxRecord], dropped: UInt64, powerLosses: UInt64) {
        let (saved, powerLosses) = state.withLock { state in
            (Array(state.latest.values).sorted { $0.activityID < $1.activityID }, state.powerLosses)
        }
        let (primary, journal, logger) = (primary, journal, logger)
        do {
            // The newest are the spool's, unless it has none yet (then the journal's, after a power cut).
            let newest = try await spoolExecutor.run {
                let spool = try primary.outbox.newest(max: tail)
                return spool.isEmpty ? try journal.outbox.newest(max: tail) : spool
            }
            return (saved, newest, await droppedCount(), powerLosses)
        } catch {
            logger.error(
                "Cannot read the saved track points",
                metadata: ["event": "agent.points.unreadable", "error": "\(error)"])
            return (saved, [], 0, powerLosses)
        }
    }

    // MARK: Accepting

    /// Takes a batch: its track points (appended to the spool, or the journal with every-fix) and
    /// its changed activities' records; `milestones` are those whose change must reach the
    /// journal at the next commit. Returns once they may be published: at once with the spool,
    /// unless a seq is beyond its reservation (a burst faster than the reservations: then after
    /// the commit that renews them); after the flush with every-fix.
    ///
    /// - Returns: the failure's description, nil when everything was taken; and the dropped count.
    func persist(points: [AgentCore.TrackPointEntry], records: [Record], milestones: Set<String>) async -> (
        failure: String?, dropped: UInt64
    ) {
        let (primary, journal, logger) = (primary, journal, logger)
        let unrecorded = state.withLock { $0.handOff.unrecorded }
        // One call to the spool's thread a fix: the last delivery is recorded with the append.
        let outcome = await spoolExecutor.run { () -> Accepted in
            var accepted = Accepted()
            accepted.recording = Self.recordDelivery(unrecorded, in: primary.outbox)
            let tail = primary.outbox.indices.upperBound
            do {
                if !points.isEmpty { try primary.outbox.append(contentsOf: points) }
                for record in records { try primary.save(record, logger: logger) }
            } catch {
                accepted.failure = "\(error)"
            }
            // What was appended, also when a later point or a record failed.
            accepted.firstIndex = tail
            accepted.appended = Int(primary.outbox.indices.upperBound - tail)
            accepted.dropped = max(primary.outbox.droppedCount, journal.outbox.droppedCount)
            return accepted
        }
        handOver(outcome, points: points, unrecorded: unrecorded)
        let taken = (outcome.failure, outcome.dropped)
        guard case .interval = durability else { return taken }
        let uptime = Self.uptime
        let due = state.withLock { state -> Bool in
            state.milestones.formUnion(milestones)
            var due = false
            for record in records {
                let id = record.activityID
                state.latest[id] = record
                state.removed.remove(id)
                state.trackReservations[id, default: SeqReservation(durable: 0, used: 0)]
                    .observe(used: record.trackSeq, at: uptime)
                state.envelopeReservations[id, default: SeqReservation(durable: 0, used: 0)]
                    .observe(used: record.lastSeq, at: uptime)
                // An activity the journal has never seen is new: a power cut can only lose it
                // whole (its retained envelope is then an orphan, ended and cleared), never make
                // its seqs used twice.
                guard state.journaled[id] != nil else { continue }
                if !state.trackReservations[id]!.covers(record.trackSeq)
                    || !state.envelopeReservations[id]!.covers(record.lastSeq)
                {
                    due = true
                }
            }
            return due
        }
        // A burst faster than the reservations: this batch's numbers are on the device first. And
        // points coming faster than the commits (a replay at full speed while the broker is away):
        // a commit now, so that the spool lets go of them, and its memory stays bounded.
        let spoolFull = primary.outbox.count >= 2 * window
        if due || spoolFull, let failure = await commit() { return (taken.0 ?? failure, taken.1) }
        return taken
    }

    /// What one call to the spool's thread in ``persist(points:records:milestones:)`` did.
    private struct Accepted: Sendable {
        /// The primary index of the first point appended, and how many were.
        var firstIndex: UInt64 = 0
        var appended = 0
        var failure: String?
        var dropped: UInt64 = 0
        /// Recording the last delivery, if there was one to record.
        var recording: Result<Void, AgentStoreError>?
    }

    /// Gives the points just appended to the hand-off, and takes what recording the delivery gave.
    private func handOver(_ accepted: Accepted, points: [AgentCore.TrackPointEntry], unrecorded: UInt64?) {
        let handed = points.prefix(accepted.appended).enumerated().map { offset, point in
            OutboxRecord(index: accepted.firstIndex + UInt64(offset), topic: point.topic, payload: point.payload)
        }
        state.withLock { state in
            state.handOff.appended(handed)
            state.persistedSinceCommit = true
            if let unrecorded, let recording = accepted.recording {
                Self.noteRecording(recording, through: unrecorded, &state, logger: logger)
            }
        }
    }

    /// Takes what recording a delivery in the primary outbox gave: a failure (a full disk) is
    /// logged once until it works again, and the delivery is recorded with the next call.
    private static func noteRecording(
        _ recording: Result<Void, AgentStoreError>, through index: UInt64, _ state: inout State, logger: Logger
    ) {
        switch recording {
        case .success:
            state.handOff.recorded(through: index)
            guard state.recordingFails else { return }
            state.recordingFails = false
            logger.notice(
                "Recording delivered track points in the outbox works again",
                metadata: ["event": "agent.delivery-record.recovered"])
        case .failure(let error):
            guard !state.recordingFails else { return }
            state.recordingFails = true
            logger.error(
                "Cannot record delivered track points in the outbox: they are not published again, but after a restart before it works they would be (the same seqs)",
                metadata: ["event": "agent.delivery-record.failed", "error": "\(error)"])
        }
    }

    /// Records in the primary outbox the delivery it does not have yet, on the calling thread (an
    /// executor's); nil when there was none.
    private static func recordDelivery(_ unrecorded: UInt64?, in outbox: Outbox) -> Result<Void, AgentStoreError>? {
        guard let unrecorded else { return nil }
        do {
            try outbox.acknowledge(through: unrecorded)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Forgets an activity (it was dismissed): its record goes from the spool now, from the
    /// journal at the next commit.
    func remove(activityID: String) async {
        let (primary, logger) = (primary, logger)
        state.withLock { state in
            state.latest[activityID] = nil
            state.milestones.remove(activityID)
            state.removed.insert(activityID)
        }
        do {
            try await spoolExecutor.run {
                try primary.remove(activityID, logger: logger)
            }
        } catch {
            logger.error(
                "Cannot remove an activity's state file",
                metadata: ["event": "agent.state.remove.failed", "error": "\(error)"])
        }
    }

    // MARK: Delivering

    /// The oldest `max` points not delivered yet: those that left the spool first, from the
    /// journal, then the spool's. Their indices are the spool's, for ``delivered(through:)``.
    /// The points just appended come from memory (``OutboxHandOff``), without a call to the
    /// spool's thread.
    func peek(max: Int) async throws -> [OutboxRecord] {
        let (primary, journal) = (primary, journal)
        let indices = primary.outbox.indices
        let head = indices.lowerBound
        let (left, handed, start) = state.withLock { state in
            let left = Array(Self.leftTheSpool(state, head: head).prefix(max))
            let handed = left.isEmpty ? state.handOff.take(from: head, tail: indices.upperBound, max: max) : nil
            return (left, handed, Swift.max(head, state.handOff.firstUndelivered))
        }
        guard let first = left.first else {
            if let handed { return handed }
            // Delivered points may still be in the spool (their delivery not recorded yet): from the first not.
            return try await spoolExecutor.run { try primary.outbox.records(from: start, max: max) }
        }
        let records = try await journalExecutor.run {
            try journal.outbox.records(from: first.journal, max: left.count)
        }
        // Paired by journal index: a point the journal dropped when it was full is skipped.
        var result: [OutboxRecord] = []
        var entries = left[...]
        for record in records {
            while let entry = entries.first, entry.journal < record.index { entries.removeFirst() }
            guard let entry = entries.first, entry.journal == record.index else { continue }
            result.append(OutboxRecord(index: entry.primary, topic: record.topic, payload: record.payload))
        }
        if result.isEmpty {
            // All dropped by the journal (counted there): nothing of them to deliver.
            state.withLock { $0.handOff.delivered(through: left[left.count - 1].primary) }
            return try await peek(max: max)
        }
        return result
    }

    /// The points not delivered that left the spool (before its `head`), oldest first.
    private static func leftTheSpool(_ state: State, head: UInt64) -> ArraySlice<(primary: UInt64, journal: UInt64)> {
        let after = state.delivered.map { $0 + 1 } ?? 0
        let mapping = state.mapping
        // Both sorted by primary index.
        var low = 0
        var high = mapping.count
        while low < high {
            let middle = (low + high) / 2
            if mapping[middle].primary < after { low = middle + 1 } else { high = middle }
        }
        var end = mapping.count
        var start = low
        while start < end {
            let middle = (start + end) / 2
            if mapping[middle].primary < head { start = middle + 1 } else { end = middle }
        }
        return mapping[low..<end]
    }

    /// Takes that every point through primary index `index` was delivered: in memory now (the
    /// drainer never gets them again), in the spool's cursor with the next call to it (the next
    /// ``persist(points:records:milestones:)`` or commit; with every-fix, the journal's), in the
    /// journal at the next commit. A crash before the cursor has it delivers them again, with the
    /// same seqs.
    func delivered(through index: UInt64) {
        state.withLock { $0.handOff.delivered(through: index) }
    }

    /// How many points were dropped because the outbox was full, over its life.
    func droppedCount() async -> UInt64 {
        let (primary, journal) = (primary, journal)
        return await spoolExecutor.run { max(primary.outbox.droppedCount, journal.outbox.droppedCount) }
    }

    /// The points still waiting, in the spool and left from it.
    func pendingCount() async -> Int {
        let indices = primary.outbox.indices
        let (left, start) = state.withLock {
            (
                Self.leftTheSpool($0, head: indices.lowerBound).count,
                max(indices.lowerBound, $0.handOff.firstUndelivered)
            )
        }
        return Int(indices.upperBound - min(start, indices.upperBound)) + left
    }

    // MARK: Committing

    /// Writes to the journal what must be there now, with one flush; nothing when nothing must,
    /// and then no call to the journal's thread either (at 1 Hz with the broker reachable, most
    /// commits: a fix's append records the delivery before it in the spool, the commit only when
    /// no fix came since the last). Serialised on the journal's executor; with every-fix there is
    /// nothing to commit.
    ///
    /// - Returns: the failure's description (logged at debug: the agent core reports it once), or
    ///   nil. What a failed commit was to write is written by the next one.
    @discardableResult
    func commit(final: Bool = false) async -> String? {
        guard case .interval = durability else { return nil }
        let (primary, journal, logger) = (primary, journal, logger)
        let tail = primary.outbox.indices.upperBound
        let dropsToCount = primary.outbox.droppedCount > journal.outbox.droppedCount
        let (work, unrecorded) = state.withLock { state in
            let unrecorded = state.persistedSinceCommit ? nil : state.handOff.unrecorded
            state.persistedSinceCommit = false
            return (Self.plan(&state, final: final), unrecorded)
        }
        if !final, unrecorded == nil, !dropsToCount, work.isEmpty(tail: tail) { return nil }
        let (outcome, recording) = await journalExecutor.run {
            () -> (Result<[(UInt64, UInt64)], any Error>, Result<Void, AgentStoreError>?) in
            // The spool's cursor too, for when no fix comes to record it.
            let recording = Self.recordDelivery(unrecorded, in: primary.outbox)
            do {
                return (.success(try Self.write(work, primary: primary, journal: journal, logger: logger)), recording)
            } catch {
                return (.failure(error), recording)
            }
        }
        state.withLock { state in
            if let unrecorded, let recording {
                Self.noteRecording(recording, through: unrecorded, &state, logger: logger)
            }
            switch outcome {
            case .success(let mapping):
                state.mapping += mapping
                if let last = mapping.last?.0 { state.journaledThrough = max(state.journaledThrough ?? 0, last) }
                if let acknowledged = work.acknowledged { state.mapping.removeAll { $0.journal <= acknowledged } }
                for (id, record) in work.records {
                    state.journaled[id] = record
                    state.trackReservations[id, default: SeqReservation(durable: 0, used: 0)]
                        .renewed(through: record.trackSeq)
                    state.envelopeReservations[id, default: SeqReservation(durable: 0, used: 0)]
                        .renewed(through: record.lastSeq)
                }
                for id in work.removed { state.journaled[id] = nil }
            case .failure:
                state.milestones.formUnion(work.records.map(\.0))
                state.removed.formUnion(work.removed)
            }
        }
        guard case .failure(let error) = outcome else {
            await trimSpool()
            return nil
        }
        logger.debug("Cannot write the journal", metadata: ["event": "agent.journal.failed", "error": "\(error)"])
        return "\(error)"
    }

    /// Past ``window`` points, the spool lets go of those the journal has: they are delivered
    /// from it (``peek(max:)``).
    private func trimSpool() async {
        let outbox = primary.outbox
        guard outbox.count > window, let through = state.withLock({ $0.journaledThrough }) else { return }
        do {
            try await spoolExecutor.run { try outbox.acknowledge(through: through) }
        } catch {
            logger.debug("Cannot trim the spool", metadata: ["event": "agent.spool.trim.failed", "error": "\(error)"])
        }
    }

    /// What one commit writes.
    private struct Work: Sendable {
        /// Primary indices of the points to copy to the journal.
        var points: Range<UInt64>?
        /// The journal index through which points are delivered.
        var acknowledged: UInt64?
        /// The records to write, by activity, with their seqs reserved ahead.
        var records: [(String, Record)] = []
        var removed: Set<String> = []

        /// Whether it writes nothing, the primary's next index being `tail`.
        func isEmpty(tail: UInt64) -> Bool {
            (points.map { $0.lowerBound >= tail } ?? true) && acknowledged == nil && records.isEmpty
                && removed.isEmpty
        }
    }

    /// Decides what the commit writes, under the lock.
    private static func plan(_ state: inout State, final: Bool) -> Work {
        var work = Work()
        // The points neither delivered nor journaled yet.
        let from = max(state.delivered.map { $0 + 1 } ?? 0, state.journaledThrough.map { $0 + 1 } ?? 0)
        work.points = from..<UInt64.max
        // The journal's points delivered since.
        if let delivered = state.delivered {
            work.acknowledged = state.mapping.last { $0.primary <= delivered }?.journal
        }
        for (id, record) in state.latest {
            var track = state.trackReservations[id] ?? SeqReservation(durable: 0, used: 0)
            var envelope = state.envelopeReservations[id] ?? SeqReservation(durable: 0, used: 0)
            let needed =
                final || state.milestones.contains(id) || state.journaled[id] == nil
                || track.needsRenewal(used: record.trackSeq) || envelope.needsRenewal(used: record.lastSeq)
            guard needed else { continue }
            var written = record
            if !final {
                // Ahead, so that a power cut after this never lets a number be used twice.
                written.trackSeq = track.renewal(used: record.trackSeq)
                written.lastSeq = envelope.renewal(used: record.lastSeq)
            }
            track.renewed(through: written.trackSeq)
            envelope.renewed(through: written.lastSeq)
            work.records.append((id, written))
        }
        state.milestones = []
        work.removed = state.removed
        state.removed = []
        return work
    }

    /// Writes `work` to the journal and flushes it once; returns the (primary, journal) index pairs
    /// of the points copied. Runs on the journal's executor.
    private static func write(_ work: Work, primary: Tier, journal: Tier, logger: Logger) throws -> [(UInt64, UInt64)] {
        var mapping: [(UInt64, UInt64)] = []
        var wrote = false
        if let range = work.points {
            var start = range.lowerBound
            while true {
                let records = try primary.outbox.records(from: start, max: 1024)
                guard let last = records.last else { break }
                let first = journal.outbox.indices.upperBound
                try journal.outbox.append(contentsOf: records)
                for (offset, record) in records.enumerated() { mapping.append((record.index, first + UInt64(offset))) }
                start = last.index + 1
                wrote = true
            }
        }
        if wrote { try journal.outbox.sync() }
        if let last = mapping.last {
            // For a restart after a crash: where the spool's points are in the journal.
            try "\(Int64(last.1) - Int64(last.0))".write(
                toFile: offsetFile(primary.directory), atomically: true, encoding: .utf8)
        }
        // The spool's drops, which the journal never saw, outlive the spool.
        try journal.outbox.countDropped(atLeast: primary.outbox.droppedCount)
        if let acknowledged = work.acknowledged { try journal.outbox.acknowledge(through: acknowledged) }
        for (_, record) in work.records { try journal.replace(record, logger: logger) }
        for id in work.removed { try journal.removeFile(id, logger: logger) }
        return mapping
    }

    /// Commits what is left, with the exact seqs (no reservation ahead: the next start goes on
    /// without a gap), closes both tiers and removes the spool, which the journal then holds in
    /// full; when that commit fails (a full card), the spool stays, for the next start.
    func close() async {
        let failure = await commit(final: true)
        let (primary, journal, spoolDirectory) = (primary, journal, spoolDirectory)
        let logger = logger
        // With every-fix there is no commit: the last deliveries are recorded here.
        let unrecorded = state.withLock { $0.handOff.unrecorded }
        await journalExecutor.run {
            if case .failure(let error) = Self.recordDelivery(unrecorded, in: primary.outbox) {
                logger.error(
                    "Cannot record delivered track points in the outbox",
                    metadata: ["event": "agent.delivery-record.close.failed", "error": "\(error)"])
            }
            primary.outbox.close()
            primary.recordFiles?.closeAll()
            // With every-fix they are one.
            if journal.directory != primary.directory { journal.outbox.close() }
            guard failure == nil else { return }
            if let spoolDirectory { try? FileManager.default.removeItem(atPath: spoolDirectory) }
            do {
                try RunLedger(directory: journal.directory).endCleanly()
            } catch {
                logger.error(
                    "Cannot record the clean stop", metadata: ["event": "agent.clean-stop.failed", "error": "\(error)"])
            }
        }
    }

    /// Seconds on the monotonic clock, for the rates of use.
    private static var uptime: Double { (ContinuousClock.now - origin).inSeconds }
    private static let origin = ContinuousClock.now
}

extension UInt64 {
    /// One less, or nil for zero.
    fileprivate var checkedPredecessor: UInt64? { self == 0 ? nil : self - 1 }
}
