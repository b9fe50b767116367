import AgentCore
import Foundation
import LiveActivity
import MyelineWire
import Testing

/// What the agent does with what others publish on its own topics (issue 23): a second agent is
/// believed only on a pattern two live agents make, a status it did not publish is answered at
/// once, and a flood of unknown retained activities costs a bounded number of publishes.
@Suite("AgentCore: presence and what others publish on this device's topics")
struct AgentCorePresenceTests {
    /// One step of a row: what the broker reports.
    enum Step: Sendable, CustomStringConvertible {
        /// The client connected.
        case connect
        /// The connection was lost; `takenOver` when the broker said "session taken over".
        case lose(takenOver: Bool)
        /// A status on the device's own topic: `online` (or not) of `instance`, since `since`
        /// seconds after the epoch, delivered live or as retained at a subscription.
        case status(online: Bool = true, instance: String?, since: Double = 5, retained: Bool = false)

        var description: String {
            switch self {
            case .connect: "connect"
            case .lose(let takenOver): takenOver ? "taken over" : "lost"
            case .status(let online, let instance, let since, let retained):
                "\(retained ? "retained " : "")\(online ? "online" : "offline") of \(instance ?? "no instance") since \(Int(since))"
            }
        }

        var event: AgentCore.Event {
            switch self {
            case .connect: .connected(sessionPresent: false)
            case .lose(let takenOver): .disconnected(sessionTakenOver: takenOver)
            case .status(let online, let instance, let since, let retained):
                .status(
                    online
                        ? .online(device: Script.device, since: Script.epoch + since, instance: instance)
                        : .offline(device: Script.device, since: Script.epoch + since, instance: instance),
                    retained: retained)
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        /// The evidence the conflict is reported with (its log metadata key), nil when it must not be.
        var evidence: String?
        var testDescription: String { name }
    }

    /// Runs `steps` one second apart from a started core (the process started at 0 s).
    static func run(_ steps: [Step]) -> (script: Script, actions: [AgentCore.Action]) {
        var script = Script()
        script.start()
        var actions: [AgentCore.Action] = []
        for (index, step) in steps.enumerated() { actions += script.at(Double(index + 1), step.event) }
        return (script, actions)
    }

    /// The first three rows are what the issue reproduced: one status (or one status and a
    /// reconnection, or one takeover) made the agent wait the maximum delay after every loss.
    @Test(arguments: [
        Row(name: "one status of another instance after connecting", steps: [.connect, .status(instance: "other")]),
        Row(
            name: "a forged status retained at the second connection",
            steps: [.connect, .lose(takenOver: false), .connect, .status(instance: "other", retained: true)]),
        Row(name: "one takeover", steps: [.connect, .lose(takenOver: true)]),
        Row(
            name: "two statuses of another instance during one connection",
            steps: [.connect, .status(instance: "other"), .status(instance: "other", since: 6)]),
        Row(
            name: "statuses during two connections",
            steps: [
                .connect, .status(instance: "other"), .lose(takenOver: false), .connect,
                .status(instance: "other", retained: true),
            ],
            evidence: "myeline.instance.other"),
        Row(
            name: "statuses of two other instances during two connections",
            steps: [
                .connect, .status(instance: "other"), .lose(takenOver: false), .connect, .status(instance: "third"),
            ],
            evidence: "myeline.instance.other"),
        Row(
            name: "a takeover, then a status",
            steps: [.connect, .lose(takenOver: true), .connect, .status(instance: "other")],
            evidence: "myeline.instance.other"),
        Row(
            name: "a status, then a takeover", steps: [.connect, .status(instance: "other"), .lose(takenOver: true)],
            evidence: "mqtt.reason"),
        Row(
            name: "two takeovers", steps: [.connect, .lose(takenOver: true), .connect, .lose(takenOver: true)],
            evidence: "mqtt.reason"),
        Row(
            name: "the status an earlier run left, retained at the first connection, then a takeover",
            steps: [.connect, .status(instance: "earlier", retained: true), .lose(takenOver: true)]),
        Row(
            name: "statuses from before this process started",
            steps: [
                .connect, .status(instance: "other", since: -60), .lose(takenOver: true), .connect,
                .status(instance: "other", since: -60),
            ]),
        Row(
            name: "this process's own statuses",
            steps: [.connect, .status(instance: "mine"), .lose(takenOver: true), .connect, .status(instance: "mine")]),
        Row(
            name: "offline statuses of another instance",
            steps: [
                .connect, .status(online: false, instance: "other"), .lose(takenOver: true), .connect,
                .status(online: false, instance: "other"),
            ]),
        Row(
            name: "statuses without an instance (an older agent)",
            steps: [.connect, .status(instance: nil), .lose(takenOver: true), .connect, .status(instance: nil)]),
    ])
    func aSecondAgentIsBelievedOnlyOnAPatternOfTwoLiveAgents(_ row: Row) {
        let (script, actions) = Self.run(row.steps)
        #expect(actions.has(.reconnectSlowly) == (row.evidence != nil), "\(row.steps)")
        #expect(script.core.conflict.isDetected == (row.evidence != nil))
        let reports = actions.compactMap { action -> AgentCore.LogEntry? in
            if case .log(let entry) = action, entry.level == .error { entry } else { nil }
        }
        #expect(reports.count == (row.evidence == nil ? 0 : 1))
        if let evidence = row.evidence { #expect(reports.first?.metadata[evidence] != nil, "\(reports)") }
    }

    @Test func afterTheReportEveryLossIsCountedAndNotReportedAgain() {
        var (script, _) = Self.run([.connect, .lose(takenOver: true), .connect, .lose(takenOver: true)])
        let again = script.at(10, .disconnected(sessionTakenOver: true))
        #expect(!again.has(.reconnectSlowly))
        #expect(again.logs(.error).isEmpty)
        #expect(again.logs(.info) == ["agent.duplicate.lost"])
        #expect(script.core.conflict.lossesSince == 1)
    }

    struct CorrectionRow: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        /// How many `online` statuses the last step publishes.
        var answers: Int
        var testDescription: String { name }
    }

    /// The first row is what the issue reproduced: a compromised site marked a running tracker
    /// offline with a retained status, and every board believed it while the agent ran.
    @Test(arguments: [
        CorrectionRow(
            name: "a forged offline while connected", steps: [.connect, .status(online: false, instance: nil)],
            answers: 1),
        CorrectionRow(
            name: "this agent's own will, published late by the broker",
            steps: [.connect, .status(online: false, instance: "mine")], answers: 1),
        CorrectionRow(
            name: "another instance's online", steps: [.connect, .status(instance: "other")], answers: 1),
        CorrectionRow(
            name: "another instance's online, again during the same connection",
            steps: [.connect, .status(instance: "other"), .status(instance: "other", since: 6)], answers: 0),
        CorrectionRow(
            name: "an offline again during the same connection",
            steps: [.connect, .status(online: false, instance: nil), .status(online: false, instance: nil)],
            answers: 1),
        CorrectionRow(
            name: "another instance's online once a second agent is known",
            steps: [.connect, .lose(takenOver: true), .connect, .status(instance: "other")], answers: 0),
        CorrectionRow(
            name: "the retained status sent at a subscription (the online of the connection replaces it)",
            steps: [.connect, .status(online: false, instance: "earlier", retained: true)], answers: 0),
        CorrectionRow(name: "this agent's own online", steps: [.connect, .status(instance: "mine")], answers: 0),
        CorrectionRow(
            name: "while not connected",
            steps: [.connect, .lose(takenOver: false), .status(online: false, instance: nil)],
            answers: 0),
    ])
    func aStatusThisAgentDidNotPublishIsAnsweredWithItsOwnAtOnce(_ row: CorrectionRow) {
        var script = Script()
        script.start()
        for (index, step) in row.steps.dropLast().enumerated() { script.at(Double(index + 1), step.event) }
        let last = script.at(Double(row.steps.count), row.steps.last!.event)
        #expect(last.statuses.count == row.answers, "\(last.statuses)")
        for status in last.statuses {
            #expect(status.state == .online && status.instance == "mine")
            #expect(status.since == Script.epoch + 1, "the since of the connection it belongs to")
        }
    }

    /// Someone removed the retained status of a running tracker (an empty retained message): a board
    /// started then found no status at all, and the agent did not publish it again.
    @Test func aRemovedStatusIsPublishedAgainEachTimeAndLoggedOncePerConnection() {
        var script = Script()
        script.start()
        #expect(script.at(1, .statusCleared).statuses.isEmpty, "not connected: the connection's online comes anyway")
        script.at(2, .connected(sessionPresent: false))
        let first = script.at(3, .statusCleared)
        #expect(first.statuses.map(\.state) == [.online])
        #expect(first.statuses.first?.instance == "mine")
        #expect(first.statuses.first?.since == Script.epoch + 2, "the since of the connection")
        #expect(first.logs(.warning) == ["agent.status.cleared"])
        let again = script.at(4, .statusCleared)
        #expect(again.statuses.count == 1)
        #expect(again.logs(.warning).isEmpty)
        script.at(5, .disconnected(sessionTakenOver: false))
        #expect(script.at(6, .statusCleared).statuses.isEmpty)
        script.at(7, .connected(sessionPresent: false))
        #expect(script.at(8, .statusCleared).logs(.warning) == ["agent.status.cleared"])
    }

    @Test func correctionsAreLoggedOncePerConnection() {
        var script = Script()
        script.start()
        script.at(1, .connected(sessionPresent: false))
        let forged = StatusMessage.offline(device: Script.device, since: Script.epoch, instance: nil)
        let first = script.at(2, .status(forged, retained: false))
        #expect(
            first.logs(.warning) == [
                "agent.status.foreign"
            ])
        #expect(script.at(3, .status(forged, retained: false)).logs(.warning).isEmpty)
        script.at(4, .disconnected(sessionTakenOver: false))
        script.at(5, .connected(sessionPresent: false))
        #expect(script.at(6, .status(forged, retained: false)).logs(.warning).count == 1)
    }

    /// Failure 4 of the issue: restarted on top of 45,000 retained envelopes of its own device, the
    /// agent ended and cleared 36,153 unknown activities (72,302 publishes) and grew to 425 MB.
    @Test func aFloodOfUnknownRetainedActivitiesEndsAtMostTheBoundAndIsLoggedOnce() {
        let bound = AgentCore.maximumOrphans
        var script = Script(Script.settings(autostart: false))
        script.start()
        script.at(1, .connected(sessionPresent: false))
        let flood = (0..<(bound + 136)).map { index in
            AgentCore.Event.retained(
                activityID: "junk-\(index)", payload: AgentCoreOrphanTests.envelope("junk-\(index)"))
        }
        let actions = script.at(2, flood)
        #expect(actions.published.count == 2 * bound, "an end and a clear each")
        #expect(actions.envelopes.filter { $0.hasSuffix(" clear") }.count == bound)
        #expect(script.core.orphansEnded == bound)
        #expect(script.core.ignoredOrphans == 136)
        let report = actions.compactMap { action -> AgentCore.LogEntry? in
            if case .log(let entry) = action, entry.metadata["event"] == "agent.orphans.too-many" {
                entry
            } else {
                nil
            }
        }
        #expect(report.count == 1)
        #expect(report.first?.level == .warning)
        #expect(report.first?.metadata["myeline.orphans.ignored"] == "136")
        #expect(report.first?.metadata["myeline.orphans.ended"] == "\(bound)")

        // The next subscription delivers the rest again: counted, not ended, not logged again.
        script.at(3, .disconnected(sessionTakenOver: false))
        script.at(4, .connected(sessionPresent: false))
        let again = script.at(5, Array(flood.suffix(136)))
        #expect(again.published.isEmpty)
        #expect(again.logs(.warning).isEmpty)
        #expect(script.core.ignoredOrphans == 272)
    }

    @Test func activitiesThisAgentKnowsDoNotCountTowardsTheBound() {
        var script = Script()
        script.start()
        script.at(1, .connected(sessionPresent: false))
        let own = (0..<(AgentCore.maximumOrphans + 5)).map { _ in
            AgentCore.Event.retained(activityID: "a1", payload: AgentCoreOrphanTests.envelope("a1"))
        }
        script.at(2, own)
        #expect(script.core.orphansEnded == 0)
        #expect(script.core.ignoredOrphans == 0)
    }
}

extension CoreScript {
    /// Handles a batch of events at `seconds`; returns their actions.
    @discardableResult
    mutating func at(_ seconds: Double, _ events: [AgentCore.Event]) -> [AgentCore.Action] {
        self.seconds = seconds
        let new = core.handle(events, now: Self.epoch + seconds + wallStep, uptime: seconds)
        actions += new
        return new
    }
}
