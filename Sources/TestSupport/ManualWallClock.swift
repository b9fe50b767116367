import Foundation
import LiveActivity
import Locking

/// A wall clock that moves only when a test moves it, so tests never sleep.
///
/// ``advance(by:)`` and ``set(to:)`` resume exactly the sleepers whose deadline has passed;
/// ``waitForSleeper(until:)`` lets a test wait until code under test sleeps until a given date.
/// Both kinds of wait throw `CancellationError` when their task is cancelled.
public final class ManualWallClock: WallClock {
    private enum Kind {
        case sleeper
        case watcher
    }

    private struct Suspension {
        let kind: Kind
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var nextToken = 0
        var suspensions: [Int: Suspension] = [:]

        func hasSleeper(until deadline: Date) -> Bool {
            suspensions.values.contains { $0.kind == .sleeper && $0.deadline == deadline }
        }

        mutating func resume(where isDone: (Suspension) -> Bool) {
            for (token, suspension) in suspensions where isDone(suspension) {
                suspensions[token] = nil
                suspension.continuation.resume()
            }
        }
    }

    private let state: Locked<State>

    /// Creates a clock showing `now` (by default 2023-11-14 22:13:20 UTC, epoch 1 700 000 000).
    public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Locked(State(now: now))
    }

    /// The date the clock shows.
    public var now: Date { state.withLock { $0.now } }

    /// The deadlines of the tasks sleeping on this clock, earliest first.
    public var sleeperDeadlines: [Date] {
        state.withLock { $0.suspensions.values.filter { $0.kind == .sleeper }.map(\.deadline) }.sorted()
    }

    /// Moves the clock forward by `seconds` and resumes the sleepers whose deadline has passed.
    public func advance(by seconds: TimeInterval) {
        move { $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`, forward or back (wall time can jump), and resumes the sleepers
    /// whose deadline has passed.
    public func set(to date: Date) {
        move { _ in date }
    }

    /// Returns once the clock is set or advanced to `deadline` or later; at once if it is already.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled before or while waiting.
    public func sleep(until deadline: Date) async throws {
        try await suspend(.sleeper, deadline)
    }

    /// Returns once some task sleeps on this clock until exactly `deadline`; at once if one does.
    ///
    /// - Throws: `CancellationError` if the calling task is cancelled before or while waiting.
    public func waitForSleeper(until deadline: Date) async throws {
        try await suspend(.watcher, deadline)
    }

    private func move(_ change: (Date) -> Date) {
        state.withLock { state in
            state.now = change(state.now)
            let now = state.now
            state.resume { $0.kind == .sleeper && $0.deadline <= now }
        }
    }

    private func suspend(_ kind: Kind, _ deadline: Date) async throws {
        let token = state.withLock { state in
            state.nextToken += 1
            return state.nextToken
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    let isDone =
                        switch kind {
                        case .sleeper: state.now >= deadline
                        case .watcher: state.hasSleeper(until: deadline)
                        }
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if isDone {
                        continuation.resume()
                    } else {
                        state.suspensions[token] = Suspension(
                            kind: kind, deadline: deadline, continuation: continuation)
                        if kind == .sleeper { state.resume { $0.kind == .watcher && $0.deadline == deadline } }
                    }
                }
            }
        } onCancel: {
            let suspension = state.withLock { $0.suspensions.removeValue(forKey: token) }
            suspension?.continuation.resume(throwing: CancellationError())
        }
    }
}
