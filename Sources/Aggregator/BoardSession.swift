import AsyncSupport
import Board
import Foundation
import LiveActivity
import MyelineWire
import Locking
import Logging
import MQTT

/// The board's shared state: the fleet, the view and the bootstrap, fed by the subscription and read
/// by the presenter. The network thread only files messages in an inbox (``receive(_:)``); the
/// subscription's task decodes the latest of each topic outside the lock and applies them
/// (``drain()``), so a flood costs one decode per topic per round, and a frame never waits for JSON.
final class BoardSession: Sendable {
    /// At most this many topics are remembered for "log once per topic"; beyond it rejections are only counted.
    static let loggedTopicLimit = 10_000

    struct State {
        var fleet: Fleet
        var view: BoardView
        var bootstrap = Bootstrap()
        var loggedTopics: Set<String> = []
        var lastRetainedAt: Date?
        var connection: String? = "connecting to the broker…"
        /// What `--once` found, for its exit status.
        var onceOutcome: OnceOutcome?
        /// Whether the board has been connected to the broker at least once.
        var connectedOnce = false
        /// The last failure to connect, while it has never connected.
        var connectionError: MQTTError?
        /// Changes since the presenter last took them, for `--follow --json`: each row and device
        /// once, in the order first changed (a removal is recorded as an update of its row, and
        /// the row's presence says which it was). A flood of updates while the output is blocked
        /// therefore takes at most one entry per row and device, never one per message.
        var changes: [Fleet.Change] = []
        var changeSet: Set<Fleet.Change> = []
        var recordsChanges = false
        /// Messages the MQTT client dropped because the board fell behind (its buffer was full).
        var dropped = 0
        /// Whether lost messages (``dropped``, or missed envelopes) were logged.
        var reportedLosses = false

        /// Records a change for `--follow --json`, unless its row or device is already recorded.
        mutating func record(_ change: Fleet.Change) {
            let entry: Fleet.Change
            switch change {
            case .updated, .status: entry = change
            case .removed(let key): entry = .updated(key)
            case .rejected, .unchanged: return
            }
            if changeSet.insert(entry).inserted { changes.append(entry) }
        }

        /// Takes the recorded changes.
        mutating func takeChanges() -> [Fleet.Change] {
            defer {
                changes = []
                changeSet = []
            }
            return changes
        }
    }

    let decoder: BoardDecoder
    /// The board's own retained message that tells when the bootstrap is complete (``Bootstrap``).
    let sentinelTopic: String
    let clock: any WallClock
    let logger: Logger
    private let state: Locked<State>
    private let inbox = Locked(Inbox())
    /// The sentinel's retained payload, and the live message that follows it after the bootstrap.
    static let sentinelPayload = "sentinel"
    static let checkPayload = "check"

    /// Rung when a change is recorded for `--follow --json`; rings while nobody listens coalesce.
    let changesRecorded = Doorbell()

    init(
        topics: TopicTree, ownTracks: OwnTracksInput? = nil, sentinelTopic: String, clock: any WallClock,
        logger: Logger, recordsChanges: Bool = false, view: BoardView = BoardView(),
        maximumActivitiesPerDevice: Int = Fleet.defaultMaximumActivitiesPerDevice
    ) {
        self.decoder = BoardDecoder(topics: topics, ownTracks: ownTracks)
        self.sentinelTopic = sentinelTopic
        self.clock = clock
        self.logger = logger
        var initial = State(fleet: Fleet(maximumActivitiesPerDevice: maximumActivitiesPerDevice), view: view)
        initial.recordsChanges = recordsChanges
        self.state = Locked(initial)
    }

    /// Wakes the follower as if a change had been recorded: for changes that come with time (stale).
    func ringDoorbell() {
        changesRecorded.ring()
    }

    /// What the network thread leaves for ``drain()``: the fleet's messages, the latest per topic,
    /// and whether the sentinel or the check came (after every message before them).
    struct Inbox {
        var mailbox = Mailbox<[UInt8]>()
        var sentinel = false
        var check = false
        /// Whether the sentinel or the check has come back, taken by ``drain()`` or not yet.
        var answered = false
    }

    /// Applies decoded inputs under one lock, recording changes and logging new rejections.
    private func apply(_ inputs: [(BoardInput, superseded: Int)]) {
        let now = clock.now
        let (recorded, rejections) = state.withLock { state -> (Bool, [BoardInput.Rejection]) in
            var recorded = false
            var rejections: [BoardInput.Rejection] = []
            for (input, superseded) in inputs {
                let change = state.fleet.apply(input, now: now, superseded: superseded)
                if state.recordsChanges && change != .unchanged {
                    state.record(change)
                    recorded = true
                }
                if case .rejected(let rejection) = change, state.loggedTopics.count < Self.loggedTopicLimit,
                    state.loggedTopics.insert(rejection.topic).inserted
                {
                    rejections.append(rejection)
                }
            }
            return (recorded, rejections)
        }
        if recorded { changesRecorded.ring() }
        for rejection in rejections {
            logger.debug(
                "Ignored a message that is not Myeline's",
                metadata: [
                    "event": "board.message.ignored", "mqtt.topic": "\(rejection.topic)",
                    "board.reason": "\(rejection.reason)",
                ])
        }
    }

    /// How many messages ``drain()`` decodes and applies at a time.
    static let drainChunk = 256

    /// Takes one received message, on the MQTT client's network thread: counts a retained one for the
    /// bootstrap and puts it in the inbox, without decoding it (``drain()`` does).
    @Sendable func receive(_ message: MQTTMessage) {
        if message.topic == sentinelTopic {
            switch String(decoding: message.payload, as: UTF8.self) {
            case Self.sentinelPayload where message.retain:
                inbox.withLock {
                    $0.sentinel = true
                    $0.answered = true
                }
            case Self.checkPayload:
                inbox.withLock {
                    $0.check = true
                    $0.answered = true
                }
            default: break
            }
            return
        }
        if message.retain {
            let now = clock.now
            state.withLock { state in
                state.bootstrap.noteRetained(bytes: message.payload.count)
                state.lastRetainedAt = now
            }
        }
        inbox.withLock { $0.mailbox.put(topic: message.topic, payload: message.payload) }
    }

    /// Decodes and applies everything waiting in the inbox, a chunk at a time: the latest message of
    /// each topic, then the sentinel or the check once every message before them is taken. Decoding
    /// happens outside the state's lock, so a frame never waits for JSON; taking a chunk at a time
    /// (decoded envelopes take several times their payload's memory) lets messages that arrive
    /// meanwhile wait in the inbox, one per topic, rather than beside a whole round taken out of it.
    /// - Returns: how many messages it applied.
    @discardableResult
    func drain() -> Int {
        var applied = 0
        while true {
            let (entries, emptied, sentinel, check) = inbox.withLock { inbox in
                let entries = inbox.mailbox.take(upTo: Self.drainChunk)
                guard inbox.mailbox.isEmpty else { return (entries, false, false, false) }
                defer {
                    inbox.sentinel = false
                    inbox.check = false
                }
                return (entries, true, inbox.sentinel, inbox.check)
            }
            applied += entries.count
            if !entries.isEmpty {
                apply(entries.map { (decoder.decode(topic: $0.topic, payload: $0.payload), $0.superseded) })
            }
            if sentinel { complete(reason: "the sentinel came back") { $0.sentinelArrived() } }
            if check {
                complete(reason: "the check came back without the sentinel before it") { $0.quietPeriodEnded() }
            }
            if emptied { return applied }
        }
    }

    /// Whether no retained message came for `quiet` after `subscribedAt` (or the last one), or
    /// `limit` has passed since it in any case.
    func isQuiet(subscribedAt: Date, quiet: TimeInterval, limit: TimeInterval) -> Bool {
        let now = clock.now
        let last = state.withLock { $0.lastRetainedAt ?? subscribedAt }
        return now.timeIntervalSince(last) >= quiet || now.timeIntervalSince(subscribedAt) >= limit
            || isBootstrapComplete
    }

    /// Ends the bootstrap without the sentinel when the board could not place it or send the check,
    /// or when neither the check nor the sentinel has come back `limit` seconds after the check was
    /// sent. One that came back waits in the inbox behind the messages received before it, and
    /// ``drain()`` gives the verdict once it reaches it, however long applying them takes: a board
    /// on a busy machine, still applying 10,000 retained envelopes 5 s after receiving them, took
    /// a check that had come back for one that had not, and said the bootstrap was cut.
    func completeIfCheckIsLate(sentAt: Date, limit: TimeInterval) {
        let placed = isSentinelPlaced
        let answered = inbox.withLock { $0.answered }
        guard !placed || (!answered && clock.now.timeIntervalSince(sentAt) >= limit) else { return }
        complete(reason: placed ? "the check did not come back in \(limit) s" : "no sentinel") {
            $0.quietPeriodEnded()
        }
    }

    /// Whether the broker took the board's sentinel.
    var isSentinelPlaced: Bool { state.withLock { $0.bootstrap.sentinelPlaced == true } }

    /// Notes whether the broker took the board's sentinel.
    func noteSentinel(placed: Bool) {
        state.withLock { $0.bootstrap.noteSentinel(placed: placed) }
    }

    private func complete(reason: String, _ end: (inout Bootstrap) -> Void) {
        let bootstrap: Bootstrap? = state.withLock { state in
            guard !state.bootstrap.isComplete else { return nil }
            end(&state.bootstrap)
            return state.bootstrap
        }
        guard let bootstrap else { return }
        logger.info(
            "Retained bootstrap complete",
            metadata: [
                "event": "board.bootstrap.complete", "board.retained": "\(bootstrap.retainedReceived)",
                "board.reason": "\(reason)",
                "board.verdict": "\(bootstrap.verdict)",
            ])
        if bootstrap.verdict == .unknown {
            logger.notice(
                "The broker refused the board's sentinel on myeline-aggregator/sync/#: whether it cut the retained bootstrap is unknown",
                metadata: ["event": "board.sentinel.refused"])
        }
        if let warning = bootstrap.warning {
            logger.warning(
                "Retained bootstrap truncated",
                metadata: ["event": "board.bootstrap.truncated", "board.warning": "\(warning)"])
        }
    }

    /// Takes the MQTT client's count of messages dropped because the board fell behind, and logs
    /// once, when the first are lost (dropped here, or missed: gaps in the envelopes' `seq`).
    func noteLosses(dropped: Int) {
        let losses = state.withLock { state -> (dropped: Int, missed: Int)? in
            state.dropped = dropped
            guard !state.reportedLosses, dropped > 0 || state.fleet.missedCount > 0 else { return nil }
            state.reportedLosses = true
            return (dropped, state.fleet.missedCount)
        }
        guard let losses else { return }
        logger.warning(
            "Updates were lost: the board fell behind or the broker dropped messages for it; counted as missed and dropped in the header",
            metadata: [
                "event": "board.updates.lost", "board.dropped": "\(losses.dropped)", "board.missed": "\(losses.missed)",
            ])
    }

    /// Sets the connection line of the header; `nil` when connected.
    func setConnection(_ text: String?) {
        state.withLock { $0.connection = text }
    }

    /// Notes a connection's success or an attempt's failure.
    func noteConnection(_ event: MQTTConnectionEvent) {
        state.withLock { state in
            switch event {
            case .connected:
                state.connectedOnce = true
                state.connectionError = nil
            case .connectionFailed(let error) where !state.connectedOnce:
                state.connectionError = error
            case .connectionFailed, .disconnected:
                break
            }
        }
    }

    /// Runs `body` on the state, under the lock.
    func withState<R>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    /// Whether the bootstrap is over.
    var isBootstrapComplete: Bool { state.withLock { $0.bootstrap.isComplete } }
}
