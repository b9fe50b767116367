import Foundation
import Testing
import Tracking

@Suite struct UpdateBudgetTests {
    /// One call: seconds after t0, the content's position (metres north of Višnjan, nil: no location),
    /// what changed, and the expected decision.
    struct Call: Sendable, CustomTestStringConvertible {
        var second: Double
        var north: Double?
        var change: UpdateBudget.Change = .none
        var expected: UpdateBudget.Decision
        var testDescription: String { "t=\(second) \(north.map { "\($0) m" } ?? "no location") \(change)" }
    }

    static let calls: [Call] = [
        Call(second: 0, north: nil, change: .lifecycle, expected: .publish(.lifecycle)),
        Call(second: 1, north: 0, expected: .skip(.tooSoon)),
        Call(second: 5, north: 0, expected: .publish(.stateChange)),
        Call(second: 6, north: 30, expected: .skip(.tooSoon)),
        Call(second: 10, north: 24, expected: .skip(.notMovedEnough)),
        Call(second: 11, north: 26, expected: .publish(.moved)),
        Call(second: 30, north: 40, expected: .skip(.notMovedEnough)),
        Call(second: 70, north: 40, expected: .skip(.notMovedEnough)),
        Call(second: 71, north: 40, expected: .publish(.heartbeat)),
        Call(second: 72, north: 40, change: .state, expected: .skip(.tooSoon)),
        Call(second: 73, north: 40, expected: .skip(.tooSoon)),
        Call(second: 76, north: 40, expected: .publish(.stateChange)),
        Call(second: 77, north: 41, change: .alert, expected: .publish(.alert)),
        Call(second: 78, north: 500, expected: .skip(.tooSoon)),
        Call(second: 82, north: 500, expected: .publish(.moved)),
        Call(second: 83, north: nil, change: .state, expected: .skip(.tooSoon)),
        Call(second: 90, north: nil, expected: .publish(.stateChange)),
        Call(second: 200, north: nil, expected: .publish(.heartbeat)),
        Call(second: 210, north: 500, expected: .publish(.stateChange)),
        Call(second: 211, north: 500, change: .lifecycle, expected: .publish(.lifecycle)),
        Call(second: 100, north: 500, expected: .publish(.heartbeat)),
    ]

    @Test func rules() {
        var budget = UpdateBudget(policy: TrackingPolicy())
        for call in Self.calls {
            let position = call.north.map { Place.visnjan.offset(north: $0, east: 0) }
            let decision = budget.decide(position: position, change: call.change, now: Place.t0 + call.second)
            #expect(decision == call.expected, "\(call)")
        }
    }

    @Test func firstDecisionPublishes() {
        var budget = UpdateBudget(policy: TrackingPolicy())
        #expect(budget.nextDeadline == nil)
        #expect(budget.decide(position: Place.visnjan, change: .none, now: Place.t0) == .publish(.first))
        #expect(budget.nextDeadline == Place.t0 + 60)
    }

    @Test func deadlineIsTheHeartbeatOrTheEndOfTheMinimumInterval() {
        var budget = UpdateBudget(policy: TrackingPolicy(minimumInterval: 5, heartbeat: 30))
        _ = budget.decide(position: nil, change: .lifecycle, now: Place.t0)
        #expect(budget.nextDeadline == Place.t0 + 30)
        #expect(budget.decide(position: nil, change: .state, now: Place.t0 + 2) == .skip(.tooSoon))
        #expect(budget.hasPendingChange)
        #expect(budget.nextDeadline == Place.t0 + 5)
        #expect(budget.decide(position: nil, change: .none, now: Place.t0 + 5) == .publish(.stateChange))
        #expect(budget.nextDeadline == Place.t0 + 35)
    }

    /// A receiver standing still for an hour with 5 m of noise publishes only its heartbeats.
    @Test(arguments: [30.0, 60.0, 120.0])
    func standingStillPublishesHeartbeatsOnly(heartbeat: Double) {
        var generator = SeededGenerator(state: 7)
        var budget = UpdateBudget(policy: TrackingPolicy(heartbeat: heartbeat))
        var reasons: [UpdateBudget.PublishReason] = []
        for second in 0..<3600 {
            let position = Place.visnjan.jittered(within: 5, using: &generator)
            if case .publish(let reason) = budget.decide(
                position: position, change: second == 0 ? .lifecycle : .none, now: Place.t0 + Double(second))
            {
                reasons.append(reason)
            }
        }
        #expect(reasons.first == .lifecycle)
        #expect(reasons.dropFirst().allSatisfy { $0 == .heartbeat })
        #expect(reasons.count == Int((3600 / heartbeat).rounded(.up)))
    }
}
