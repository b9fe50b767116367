import Foundation
import LiveActivity
import MyelineWire
import Testing

@testable import MyelineAgentKit
import AgentCore

/// What the agent does for each intent, as a table: the command, its running activities (oldest
/// first), and the plan.
struct IntentPlanTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static let cases: [(Command.Intent, String?, Bool, [String], IntentPlan)] = [
        // start: answers with the running one, unless `new` asks for another.
        (.start, nil, false, [], .start(id: nil)),
        (.start, nil, false, ["a", "b"], .answer(activity: "b")),
        (.start, nil, true, ["a"], .start(id: nil)),
        (.start, "c", false, [], .start(id: "c")),
        (.start, "c", false, ["a"], .answer(activity: "a")),
        (.start, "c", true, ["a"], .start(id: "c")),
        (.start, "a", true, ["a"], .answer(activity: "a")),
        // stop, pause, resume: the named activity, or the newest running one.
        (.stop, nil, false, ["a", "b"], .stop("b")),
        (.stop, "a", false, ["a", "b"], .stop("a")),
        (.pause, nil, false, ["a"], .pause("a")),
        (.resume, "a", false, ["a"], .resume("a")),
        (.stop, nil, false, [], .refuse("no activity is running; start one first")),
        (.pause, nil, false, [], .refuse("no activity is running; start one first")),
        (.resume, "x", false, ["a"], .refuse("no running activity \"x\" on this device")),
        // report: works without an activity too.
        (.report, nil, false, [], .report(nil)),
        (.report, nil, false, ["a", "b"], .report("b")),
        (.report, "a", false, ["a", "b"], .report("a")),
        (.report, "x", false, ["a"], .refuse("no running activity \"x\" on this device")),
        // `new` belongs to start only.
        (.stop, nil, true, ["a"], .refuse("\"new\" applies to start only, not to stop")),
    ]

    @Test(arguments: cases.indices)
    func plan(_ index: Int) throws {
        let (intent, activity, new, running, expected) = Self.cases[index]
        let command = try Command(id: "req-\(index)", intent: intent, activity: activity, new: new, timestamp: Self.t0)
        #expect(IntentPlan(command, running: running) == expected)
    }
}
