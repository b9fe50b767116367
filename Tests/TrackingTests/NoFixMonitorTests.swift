import Foundation
import Location
import Testing
import Tracking

@Suite struct NoFixMonitorTests {
    enum Input: Sendable {
        case fix
        case none(LocationUpdate.Status)
        case tick
    }

    struct Step: Sendable, CustomTestStringConvertible {
        var second: Double
        var input: Input
        var expected: Expected?
        var testDescription: String { "t=\(second) \(input)" }
    }

    enum Expected: Hashable, Sendable {
        case located
        case holding(until: Double)
        case lost(LocationUpdate.Status)
        case stillLost(LocationUpdate.Status)
    }

    static let steps: [Step] = [
        Step(second: 0, input: .none(.noFix), expected: .stillLost(.noFix)),
        Step(second: 1, input: .none(.sourceUnavailable), expected: .stillLost(.sourceUnavailable)),
        Step(second: 2, input: .fix, expected: .located),
        Step(second: 10, input: .none(.noFix), expected: .holding(until: 40)),
        Step(second: 20, input: .none(.noFix), expected: .holding(until: 40)),
        Step(second: 39, input: .tick, expected: nil),
        Step(second: 40, input: .tick, expected: .lost(.noFix)),
        Step(second: 41, input: .tick, expected: nil),
        Step(second: 45, input: .none(.noFix), expected: .stillLost(.noFix)),
        Step(second: 50, input: .fix, expected: .located),
        // The receiver or gpsd gone: no grace, the last fix is not shown as current.
        Step(second: 55, input: .none(.deviceUnavailable), expected: .lost(.deviceUnavailable)),
        Step(second: 56, input: .tick, expected: nil),
        Step(second: 60, input: .fix, expected: .located),
        Step(second: 61, input: .none(.noFix), expected: .holding(until: 91)),
        Step(second: 62, input: .none(.sourceUnavailable), expected: .lost(.sourceUnavailable)),
        Step(second: 95, input: .none(.noFix), expected: .stillLost(.noFix)),
    ]

    @Test func graceThenNoLocation() {
        var monitor = NoFixMonitor(grace: 30)
        for step in Self.steps {
            let now = Place.t0 + step.second
            let decision: NoFixMonitor.Decision? =
                switch step.input {
                case .fix: monitor.receive(LocationUpdate(fix: fix(Place.visnjan, at: step.second)), now: now)
                case .none(let status): monitor.receive(LocationUpdate(noFix: status, time: now), now: now)
                case .tick: monitor.tick(now: now)
                }
            let actual: Expected? =
                switch decision {
                case nil: nil
                case .located: .located
                case .holding(let until): .holding(until: until.timeIntervalSince(Place.t0))
                case .lost(let status): .lost(status)
                case .stillLost(let status): .stillLost(status)
                }
            #expect(actual == step.expected, "\(step)")
            let showsLocation = actual == .located || { if case .holding = actual { true } else { false } }()
            if actual != nil { #expect(monitor.isLocated == showsLocation, "\(step)") }
        }
    }

    @Test func zeroGraceLosesTheLocationAtOnce() {
        var monitor = NoFixMonitor(grace: 0)
        _ = monitor.receive(LocationUpdate(fix: fix(Place.visnjan, at: 0)), now: Place.t0)
        #expect(monitor.receive(LocationUpdate(noFix: .noFix), now: Place.t0 + 1) == .lost(.noFix))
        #expect(monitor.fix == nil)
        #expect(monitor.nextDeadline == nil)
    }
}
