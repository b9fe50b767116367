import Testing

@testable import MQTT

@Suite("AnswerReading")
struct AnswerReadingTests {
    /// One step of the pump: what happened, and what the machine then decides.
    enum Step: CustomStringConvertible {
        case wrote(answersMayWait: Bool)
        case woke
        case socketReady

        var description: String {
            switch self {
            case .wrote(let mayWait): "wrote(answersMayWait: \(mayWait))"
            case .woke: "woke"
            case .socketReady: "socketReady"
            }
        }
    }

    /// Runs `steps` from a new machine; each step's actions and whether the loop then watches the
    /// socket for input.
    static func run(_ steps: [Step]) -> [([AnswerReading.Action], Bool)] {
        var reading = AnswerReading()
        return steps.map { step in
            let actions: [AnswerReading.Action]
            switch step {
            case .wrote(let mayWait): actions = reading.wrote(answersMayWait: mayWait)
            case .woke: actions = reading.woke()
            case .socketReady: actions = reading.socketReady()
            }
            return (actions, reading.watchesInput)
        }
    }

    @Test(
        arguments: [
            // The live track point at 1 Hz: written, its PUBREC read at the next wake-up (gpsd's next
            // line); the PUBREL that asks for is written outside this machine and its PUBCOMP read at once.
            (
                [Step.wrote(answersMayWait: true), .woke],
                [([AnswerReading.Action.armLimit], false), ([.cancelLimit, .read], true)]
            ),
            // Anything else written reads at once, and ends a wait of earlier answers.
            ([.wrote(answersMayWait: false)], [([], true)]),
            (
                [.wrote(answersMayWait: true), .wrote(answersMayWait: false)],
                [([.armLimit], false), ([.cancelLimit], true)]
            ),
            // A second live point before the wake-up: one limit, from the first.
            (
                [.wrote(answersMayWait: true), .wrote(answersMayWait: true), .woke],
                [([.armLimit], false), ([], false), ([.cancelLimit, .read], true)]
            ),
            // A hang-up, an error or room to write: the pump handles the socket at once, as usual.
            (
                [.wrote(answersMayWait: true), .socketReady, .woke],
                [([.armLimit], false), ([.cancelLimit], true), ([], true)]
            ),
            // A wake-up with nothing waiting does nothing.
            ([.woke, .socketReady], [([], true), ([], true)]),
        ] as [([Step], [([AnswerReading.Action], Bool)])])
    func decides(_ steps: [Step], _ expected: [([AnswerReading.Action], Bool)]) {
        let outcome = Self.run(steps)
        #expect(outcome.map(\.0) == expected.map(\.0), "\(steps)")
        #expect(outcome.map(\.1) == expected.map(\.1), "\(steps)")
    }
}
