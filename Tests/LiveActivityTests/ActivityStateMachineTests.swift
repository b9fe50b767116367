import Foundation
import LiveActivity
import Testing
import TestSupport

/// The lifecycle rules as a table: (state reached by `given`, event) -> (state, changes, error, deadline).
@Suite("ActivityStateMachine")
struct ActivityStateMachineTests {
    /// An event for the machine, at a number of seconds after t0.
    enum Event: Sendable, CustomStringConvertible {
        case update(staleAfter: TimeInterval?, at: TimeInterval)
        case end(ActivityUIDismissalPolicy, at: TimeInterval)
        case tick(at: TimeInterval)

        var description: String {
            switch self {
            case .update(let stale, let at): "update(stale: \(stale.map { "\($0)" } ?? "nil")) at \(at)"
            case .end(let policy, let at): "end(\(policy)) at \(at)"
            case .tick(let at): "tick at \(at)"
            }
        }

        /// Applies the event; returns the state changes and, for an end, the dismissal date.
        func apply(to machine: inout ActivityStateMachine) throws(ActivityError) -> ([ActivityState], Date?) {
            switch self {
            case .update(let staleAfter, let at):
                return (try machine.update(staleDate: staleAfter.map(date), now: date(at)), nil)
            case .end(let policy, let at):
                let ending = try machine.end(dismissalPolicy: policy, now: date(at))
                return (ending.stateChanges, ending.dismissalDate)
            case .tick(let at):
                return (machine.tick(now: date(at)), nil)
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        /// The stale date of the first content, in seconds after t0 (the machine starts at t0).
        var startStaleAfter: TimeInterval?
        var given: [Event] = []
        var event: Event
        var state: ActivityState
        var changes: [ActivityState] = []
        var error: ActivityError.Code?
        var dismissalAfter: TimeInterval?
        var deadlineAfter: TimeInterval?

        var testDescription: String { name }
    }

    static let hour: TimeInterval = 3600

    static let rows: [Row] = [
        Row(name: "never stale: ticks change nothing", event: .tick(at: 10 * hour), state: .active),
        Row(
            name: "active before the stale date", startStaleAfter: 60, event: .tick(at: 59), state: .active,
            deadlineAfter: 60),
        Row(
            name: "stale at the stale date", startStaleAfter: 60, event: .tick(at: 60), state: .stale, changes: [.stale]
        ),
        Row(
            name: "starts stale with a stale date of now: tick reports nothing", startStaleAfter: 0,
            event: .tick(at: 0), state: .stale),
        Row(
            name: "update with a later stale date makes it active", startStaleAfter: 60, given: [.tick(at: 61)],
            event: .update(staleAfter: 120, at: 61), state: .active, changes: [.active], deadlineAfter: 120),
        Row(
            name: "update without stale date makes it active", startStaleAfter: 60, given: [.tick(at: 61)],
            event: .update(staleAfter: nil, at: 61), state: .active, changes: [.active]),
        Row(
            name: "update with a past stale date keeps it stale", startStaleAfter: 60, given: [.tick(at: 61)],
            event: .update(staleAfter: 30, at: 61), state: .stale),
        Row(
            name: "update with a past stale date makes it stale", event: .update(staleAfter: 5, at: 10),
            state: .stale, changes: [.stale]),
        Row(
            name: "clock set back before the stale date: active again", startStaleAfter: 60, given: [.tick(at: 61)],
            event: .tick(at: 30), state: .active, changes: [.active], deadlineAfter: 60),
        Row(
            name: "end by default: ended for four hours", event: .end(.default, at: 10), state: .ended,
            changes: [.ended], dismissalAfter: 10 + 4 * hour, deadlineAfter: 10 + 4 * hour),
        Row(
            name: "end of a stale activity", startStaleAfter: 5, event: .end(.default, at: 10), state: .ended,
            changes: [.ended], dismissalAfter: 10 + 4 * hour, deadlineAfter: 10 + 4 * hour),
        Row(
            name: "end immediately: ended then dismissed", event: .end(.immediate, at: 10), state: .dismissed,
            changes: [.ended, .dismissed], dismissalAfter: 10),
        Row(
            name: "end after a later date", event: .end(.after(date(70)), at: 10), state: .ended, changes: [.ended],
            dismissalAfter: 70, deadlineAfter: 70),
        Row(
            name: "end after a date before the end: immediate", event: .end(.after(date(5)), at: 10),
            state: .dismissed, changes: [.ended, .dismissed], dismissalAfter: 10),
        Row(
            name: "end after the end itself: immediate", event: .end(.after(date(10)), at: 10), state: .dismissed,
            changes: [.ended, .dismissed], dismissalAfter: 10),
        Row(
            name: "end after more than four hours: clamped", event: .end(.after(date(10 + 5 * hour)), at: 10),
            state: .ended, changes: [.ended], dismissalAfter: 10 + 4 * hour, deadlineAfter: 10 + 4 * hour),
        Row(
            name: "ended before the dismissal date", given: [.end(.default, at: 0)], event: .tick(at: 4 * hour - 1),
            state: .ended, deadlineAfter: 4 * hour),
        Row(
            name: "ended at the dismissal date: dismissed", given: [.end(.default, at: 0)], event: .tick(at: 4 * hour),
            state: .dismissed, changes: [.dismissed]),
        Row(
            name: "ended, clock set back: still ended", given: [.end(.default, at: 100)], event: .tick(at: 0),
            state: .ended, deadlineAfter: 100 + 4 * hour),
        Row(
            name: "update after end is an error", given: [.end(.default, at: 0)],
            event: .update(staleAfter: nil, at: 1),
            state: .ended, error: .activityEnded, deadlineAfter: 4 * hour),
        Row(
            name: "end after end is an error", given: [.end(.default, at: 0)], event: .end(.immediate, at: 1),
            state: .ended, error: .activityEnded, deadlineAfter: 4 * hour),
        Row(
            name: "update after dismissal is an error", given: [.end(.immediate, at: 0)],
            event: .update(staleAfter: nil, at: 1), state: .dismissed, error: .activityEnded),
        Row(
            name: "end after dismissal is an error", given: [.end(.immediate, at: 0)], event: .end(.default, at: 1),
            state: .dismissed, error: .activityEnded),
        Row(
            name: "dismissed stays dismissed", given: [.end(.immediate, at: 0)], event: .tick(at: 10 * hour),
            state: .dismissed),
    ]

    @Test(arguments: rows)
    func transition(_ row: Row) throws {
        var machine = ActivityStateMachine(staleDate: row.startStaleAfter.map(date), now: Fixtures.t0)
        for event in row.given { _ = try event.apply(to: &machine) }
        let before = machine

        let result = Result { () throws(ActivityError) in try row.event.apply(to: &machine) }

        switch (result, row.error) {
        case (.success(let (changes, dismissalDate)), nil):
            #expect(changes == row.changes)
            #expect(dismissalDate == row.dismissalAfter.map(date))
        case (.failure(let error), let code?):
            #expect(error.code == code)
            #expect(machine == before, "a refused event changes nothing")
        case (.success, let code?):
            Issue.record("expected error \(code), got success")
        case (.failure(let error), nil):
            Issue.record("unexpected error: \(error)")
        }
        #expect(machine.state == row.state)
        #expect(machine.nextDeadline == row.deadlineAfter.map(date))
    }

    @Test("errors say what was refused and why")
    func errorMessages() throws {
        var machine = ActivityStateMachine(staleDate: nil, now: Fixtures.t0)
        _ = try machine.end(dismissalPolicy: .default, now: Fixtures.t0)
        let updated = #expect(throws: ActivityError.self) { try machine.update(staleDate: nil, now: Fixtures.t0) }
        #expect(updated?.message == "cannot update an activity that has ended")
        _ = machine.tick(now: date(4 * Self.hour))
        let ended = #expect(throws: ActivityError.self) {
            try machine.end(dismissalPolicy: .immediate, now: Fixtures.t0)
        }
        #expect(ended?.message == "cannot end an activity that was dismissed")
    }
}

/// The date `seconds` after t0.
private func date(_ seconds: TimeInterval) -> Date {
    Fixtures.t0.addingTimeInterval(seconds)
}
