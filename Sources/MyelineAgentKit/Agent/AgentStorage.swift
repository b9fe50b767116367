import AgentCore
import AgentStore
import AsyncSupport
import Foundation
import LiveActivity
import Logging

/// The agent's state directory: the outbox of track points (`STATE-DIRECTORY/outbox`) and one
/// record per activity (`STATE-DIRECTORY/activities`), every call run one at a time on one
/// ``AsyncSupport/BlockingExecutor`` (file I/O and `fsync` never block Swift's cooperative pool,
/// and the drainer's reads follow the control loop's appends in order).
struct AgentStorage: Sendable {
    typealias Record = AgentCore.Record

    let outbox: Outbox
    let executor: BlockingExecutor
    /// Where each activity's record is kept: `STATE-DIRECTORY/activities`.
    let activitiesDirectory: String
    let logger: Logger

    /// Opens the outbox in `stateDirectory` (creating it), recovering what a crash left.
    ///
    /// - Throws: `AgentStoreError` when the directory cannot be created or read.
    static func open(stateDirectory: String, capacity: Int, logger: Logger) async throws -> AgentStorage {
        let executor = BlockingExecutor(label: "myeline.agent.storage")
        let directory = URL(fileURLWithPath: stateDirectory)
        let outboxDirectory = directory.appendingPathComponent("outbox").path
        let configuration = OutboxConfiguration(capacity: capacity)
        let outbox = try await executor.run {
            try Outbox(directory: outboxDirectory, configuration: configuration, logger: logger)
        }
        return AgentStorage(
            outbox: outbox, executor: executor,
            activitiesDirectory: directory.appendingPathComponent("activities").path, logger: logger)
    }

    /// What an earlier run left: its activities' records, the outbox's newest `tail` records
    /// (their seqs may be ahead of the records after a crash) and its dropped count. A failure is
    /// logged and reads as nothing saved.
    func load(tail: Int) async -> (saved: [Record], outboxTail: [OutboxRecord], dropped: UInt64) {
        let (outbox, directory, logger) = (outbox, activitiesDirectory, logger)
        do {
            return try await executor.run {
                (
                    try ActivityStateStore<LocationActivityAttributes>.loadAll(directory: directory, logger: logger),
                    try outbox.newest(max: tail), outbox.droppedCount
                )
            }
        } catch {
            logger.error("Cannot read the saved activities", metadata: ["error": "\(error)"])
            return ([], [], 0)
        }
    }

    /// Appends the track points, then saves the records: points first, so that after a crash
    /// between the two a restart finds the points' seqs in the outbox (a record saved first would
    /// have its points lost).
    ///
    /// - Returns: the failure's description, nil when everything was saved; and the dropped count.
    func persist(points: [AgentCore.TrackPointEntry], records: [Record]) async -> (failure: String?, dropped: UInt64) {
        let (outbox, directory, logger) = (outbox, activitiesDirectory, logger)
        return await executor.run { () -> (String?, UInt64) in
            do {
                if !points.isEmpty { try outbox.append(contentsOf: points.map { ($0.topic, $0.payload) }) }
                for record in records {
                    try ActivityStateStore<LocationActivityAttributes>(
                        directory: directory, activityID: record.activityID, logger: logger
                    ).save(record)
                }
                return (nil, outbox.droppedCount)
            } catch {
                return ("\(error)", outbox.droppedCount)
            }
        }
    }

    /// Deletes an activity's record; a failure is logged.
    func remove(activityID: String) async {
        let store = ActivityStateStore<LocationActivityAttributes>(
            directory: activitiesDirectory, activityID: activityID, logger: logger)
        do {
            try await executor.run { try store.remove() }
        } catch {
            logger.error("Cannot remove an activity's state file", metadata: ["error": "\(error)"])
        }
    }

    /// The oldest `max` points waiting in the outbox.
    func peek(max: Int) async throws -> [OutboxRecord] {
        let outbox = outbox
        return try await executor.run { try outbox.peek(max: max) }
    }

    /// Records that every point through `index` was delivered.
    func acknowledge(through index: UInt64) async throws {
        let outbox = outbox
        try await executor.run { try outbox.acknowledge(through: index) }
    }

    /// The points still waiting (0 when the outbox cannot be read).
    func pendingCount() async -> Int {
        let outbox = outbox
        return await executor.run { outbox.count }
    }

    /// Closes the outbox.
    func close() async {
        let outbox = outbox
        await executor.run { outbox.close() }
    }
}
