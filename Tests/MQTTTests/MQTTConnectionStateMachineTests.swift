import AsyncSupport
import Testing

@testable import MQTT

/// The connection's life as tables of events and actions: every transition, the classification
/// of every kind of ending, and the reconnection policy's waits, with the clock and the random
/// draws given by each row.
@Suite struct MQTTConnectionStateMachineTests {
    typealias Machine = MQTTConnectionStateMachine
    typealias End = MQTTConnectionStateMachine.ConnectionEnd

    static func machine(
        backoff: Backoff = Backoff(), promptRetry: MQTTPromptRetry = MQTTPromptRetry()
    ) -> Machine {
        Machine(backoff: backoff, promptRetry: promptRetry, clientID: "myeline-van-7")
    }

    /// A machine connected at time 0.
    static func connected(backoff: Backoff = Backoff(), promptRetry: MQTTPromptRetry = MQTTPromptRetry()) -> Machine {
        var machine = machine(backoff: backoff, promptRetry: promptRetry)
        _ = machine.start(now: .zero)
        _ = machine.connectionAccepted(sessionPresent: false)
        return machine
    }

    static let refused = End(failure: LibraryFailure(code: .network, text: "Connection refused"))
    static let reset = End(failure: LibraryFailure(code: .connectionLost, text: "The connection was lost."))

    // MARK: Transitions

    @Test func startConnectsAndAnAcceptedConnectionResumes() {
        var machine = Self.machine()
        #expect(machine.start(now: .zero) == .connect)
        #expect(!machine.isConnected)
        #expect(machine.connectionAccepted(sessionPresent: true) == .resume(.connected(sessionPresent: true)))
        #expect(machine.isConnected)
    }

    @Test(arguments: [false, true])
    func theSessionPresentFlagIsReported(sessionPresent: Bool) {
        var machine = Self.machine()
        _ = machine.start(now: .zero)
        #expect(
            machine.connectionAccepted(sessionPresent: sessionPresent)
                == .resume(.connected(sessionPresent: sessionPresent)))
    }

    @Test func aFailedAttemptWaitsThenConnectsAgain() {
        var machine = Self.machine()
        _ = machine.start(now: .zero)
        let failure = MQTTConnectionEvent.connectionFailed(MQTTError(.network, "cannot connect: Connection refused"))
        #expect(
            machine.connectionEnded(Self.refused, now: .seconds(1), random: 0.5)
                == .wait(.milliseconds(500), report: failure, rule: .backoff))
        #expect(machine.waitEnded() == .connect)
        #expect(machine.connectionAccepted(sessionPresent: false) == .resume(.connected(sessionPresent: false)))
    }

    @Test func aLostConnectionIsReportedAndRetriedFromTheFirstStep() {
        var machine = Self.connected()
        let loss = MQTTConnectionEvent.disconnected(
            MQTTError(.connectionLost, "connection lost: The connection was lost."))
        #expect(
            machine.connectionEnded(Self.reset, now: .seconds(50), random: 0)
                == .wait(.seconds(1), report: loss, rule: .backoff))
        #expect(!machine.isConnected)
    }

    /// A request to connect now (an agent about to stop before its first connection) cuts a wait
    /// short, and attempts are a second apart until the next connection; then the backoff again.
    /// An attempt under way is not cut, but the wait after it is the short one. Connected or
    /// stopping, nothing happens.
    @Test func aRequestToConnectNowCutsAWaitShortAndHurriesUntilConnected() {
        let failure = MQTTConnectionEvent.connectionFailed(MQTTError(.network, "cannot connect: Connection refused"))
        var waiting = Self.machine()
        _ = waiting.start(now: .zero)
        // A wait drawn at the prompt ceiling: without the request, the next attempt is 10 s away.
        _ = waiting.connectionEnded(Self.refused, now: .zero, random: 0)
        #expect(waiting.connectRequested() == .connect)
        #expect(
            waiting.connectionEnded(Self.refused, now: .seconds(1), random: 0)
                == .wait(.seconds(1), report: failure, rule: .hurried))
        #expect(waiting.waitEnded() == .connect)
        #expect(waiting.connectionAccepted(sessionPresent: false) == .resume(.connected(sessionPresent: false)))
        let loss = MQTTConnectionEvent.disconnected(
            MQTTError(.connectionLost, "connection lost: The connection was lost."))
        #expect(
            waiting.connectionEnded(Self.reset, now: .seconds(50), random: 0)
                == .wait(.seconds(1), report: loss, rule: .backoff), "connected once, the backoff again")

        var connecting = Self.machine()
        _ = connecting.start(now: .zero)
        #expect(connecting.connectRequested() == nil, "the attempt under way goes on")
        #expect(
            connecting.connectionEnded(Self.refused, now: .seconds(1), random: 0)
                == .wait(.seconds(1), report: failure, rule: .hurried))

        var connected = Self.connected()
        #expect(connected.connectRequested() == nil)
        #expect(connected.isConnected)

        var stopping = Self.connected()
        _ = stopping.shutdownRequested()
        #expect(stopping.connectRequested() == nil)
        #expect(
            stopping.connectionEnded(End(), now: .seconds(1), random: 0.5) == .finish(report: .disconnected(nil)))
    }

    /// Shut-down from every state that takes it: a connection or an attempt is disconnected
    /// cleanly (DISCONNECT, so that the broker does not publish the will), a wait is given up.
    @Test func shutDownDisconnectsAConnectionOrAnAttemptAndGivesUpAWait() {
        var connected = Self.connected()
        #expect(connected.shutdownRequested() == .disconnect)
        #expect(
            connected.connectionEnded(End(), now: .seconds(1), random: 0.5) == .finish(report: .disconnected(nil)))

        var connecting = Self.machine()
        _ = connecting.start(now: .zero)
        #expect(connecting.shutdownRequested() == .disconnect)
        // However the flush ended, the client closed the connection: no error.
        #expect(
            connecting.connectionEnded(Self.reset, now: .seconds(1), random: 0.5) == .finish(report: .disconnected(nil))
        )

        var waiting = Self.machine()
        _ = waiting.start(now: .zero)
        _ = waiting.connectionEnded(Self.refused, now: .zero, random: 0.5)
        #expect(waiting.shutdownRequested() == .finish(report: nil))
    }

    /// An event the shell never sends in a state is a bug in the shell, and stops the process.
    @Test(arguments: InvalidEvent.allCases)
    func anEventItsStateDoesNotTakeStopsTheProcess(event: InvalidEvent) async {
        await #expect(processExitsWith: .failure) { [event] in
            var machine = MQTTConnectionStateMachineTests.machine()
            switch event {
            case .startTwice:
                _ = machine.start(now: .zero)
                _ = machine.start(now: .zero)
            case .acceptedWhileWaiting:
                _ = machine.start(now: .zero)
                _ = machine.connectionEnded(MQTTConnectionStateMachineTests.refused, now: .zero, random: 0)
                _ = machine.connectionAccepted(sessionPresent: false)
            case .endedBeforeStart:
                _ = machine.connectionEnded(MQTTConnectionStateMachineTests.refused, now: .zero, random: 0)
            case .waitEndedWhileConnected:
                _ = machine.start(now: .zero)
                _ = machine.waitEnded()
            case .shutDownTwice:
                _ = machine.start(now: .zero)
                _ = machine.shutdownRequested()
                _ = machine.shutdownRequested()
            }
        }
    }

    enum InvalidEvent: String, CaseIterable, Codable, Sendable {
        case startTwice, acceptedWhileWaiting, endedBeforeStart, waitEndedWhileConnected, shutDownTwice
    }

    // MARK: Classification

    struct Classification: Sendable, CustomTestStringConvertible {
        var wasConnected: Bool
        var end: End
        var expected: MQTTConnectionEvent
        var testDescription: String { "\(wasConnected ? "connected" : "connecting"): \(expected)" }
    }

    static let clientID = "myeline-van-7"

    /// `ClientContext.endAttempt`'s rules, now the machine's: each kind of ending and what it is
    /// reported as.
    @Test(arguments: [
        Classification(
            wasConnected: false,
            end: End(
                failure: LibraryFailure(code: .connectionRefused, text: "Connection Refused: not authorised."),
                refusal: .init(code: 5, text: "Connection Refused: not authorised.")),
            expected: .connectionFailed(
                MQTTError(
                    .connectionRefused,
                    "broker refused the connection: Connection Refused: not authorised. (reason code 5)"))),
        Classification(
            wasConnected: false,
            end: End(
                failure: LibraryFailure(code: .tls, text: "A TLS error occurred."),
                libraryDetail: "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed"),
            expected: .connectionFailed(
                MQTTError(
                    .tls,
                    "cannot connect: A TLS error occurred. (OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed)"
                ))),
        Classification(
            wasConnected: false,
            end: End(
                failure: LibraryFailure(code: .network, text: "Lookup error."), libraryDetail: "Error: Name unknown"),
            expected: .connectionFailed(MQTTError(.network, "cannot connect: Lookup error. (Error: Name unknown)"))),
        // A library detail is kept for network and TLS failures only.
        Classification(
            wasConnected: false,
            end: End(failure: LibraryFailure(code: .library, text: "Unknown error."), libraryDetail: "noise"),
            expected: .connectionFailed(MQTTError(.library, "cannot connect: Unknown error."))),
        Classification(
            wasConnected: true,
            end: End(
                failure: LibraryFailure(code: .connectionLost, text: "The connection was lost."),
                brokerDisconnect: .init(code: 0x8E, text: "Session taken over")),
            expected: .disconnected(
                MQTTError(
                    .sessionTakenOver,
                    "connection closed by the broker: Session taken over: another client connected with client id myeline-van-7"
                ))),
        Classification(
            wasConnected: true,
            end: End(
                failure: LibraryFailure(code: .connectionLost, text: "The connection was lost."),
                brokerDisconnect: .init(code: 0x8B, text: "Server shutting down")),
            expected: .disconnected(
                MQTTError(.connectionLost, "connection closed by the broker: Server shutting down"))),
        // A DISCONNECT reason before the connection was complete is not believed.
        Classification(
            wasConnected: false,
            end: End(
                failure: LibraryFailure(code: .connectionLost, text: "The connection was lost."),
                brokerDisconnect: .init(code: 0x8E, text: "Session taken over")),
            expected: .connectionFailed(MQTTError(.connectionLost, "cannot connect: The connection was lost."))),
        Classification(
            wasConnected: true,
            end: End(failure: LibraryFailure(code: .notConnected, text: "The client is not currently connected.")),
            expected: .disconnected(MQTTError(.connectionLost, "connection lost: closed by the broker"))),
        Classification(
            wasConnected: true, end: End(),
            expected: .disconnected(MQTTError(.connectionLost, "connection closed by the broker"))),
        Classification(
            wasConnected: false, end: End(),
            expected: .connectionFailed(MQTTError(.connectionLost, "connection closed by the broker"))),
    ])
    func endingsAreClassified(_ row: Classification) {
        var machine = Self.machine()
        _ = machine.start(now: .zero)
        if row.wasConnected { _ = machine.connectionAccepted(sessionPresent: false) }
        guard case .wait(_, let report, _) = machine.connectionEnded(row.end, now: .seconds(1), random: 0.5) else {
            Issue.record("expected a wait")
            return
        }
        #expect(report == row.expected)
    }

    // MARK: The reconnection policy

    /// One failed attempt in a table of waits: when it failed, the random draw, and the wait and
    /// rule the machine chose.
    struct Step: Sendable {
        var failedAt: Double
        var random: Double
        var wait: Double
        var rule: Machine.WaitRule
    }

    /// Runs `steps` from a connection lost at `lostAt` (the first step) or from the start at 0.
    static func check(_ machine: inout Machine, _ steps: [Step], lost: Bool = true) {
        for (index, step) in steps.enumerated() {
            let action = machine.connectionEnded(
                index == 0 && lost ? reset : refused, now: .seconds(step.failedAt), random: step.random)
            guard case .wait(let wait, _, let rule) = action else {
                Issue.record("step \(index): expected a wait, got \(action)")
                return
            }
            #expect(abs(wait.inSeconds - step.wait) < 1e-9, "step \(index): waited \(wait)")
            #expect(rule == step.rule, "step \(index)")
            _ = machine.waitEnded()
        }
    }

    /// After a loss, one quick retry (the backoff's first step, full jitter); then one draw
    /// within the 10 s ceiling sets the phase, and the attempts fall on it, 10 s apart, however
    /// long each took. After the 5-minute window the backoff grows to its 60 s again.
    @Test func promptRetriesKeepTheirPhaseUntilTheWindowCloses() {
        var machine = Self.connected()
        Self.check(
            &machine,
            [
                Step(failedAt: 100, random: 0.5, wait: 0.5, rule: .backoff),  // lost; nominal 1 s
                Step(failedAt: 100.5, random: 0.5, wait: 5, rule: .prompt),  // the phase: 105.5
                Step(failedAt: 105.6, random: 0.9, wait: 9.9, rule: .prompt),  // next on the phase: 115.5
                Step(failedAt: 115.5, random: 0.1, wait: 10, rule: .prompt),  // 125.5
                Step(failedAt: 133, random: 0.5, wait: 2.5, rule: .prompt),  // a 7.5 s attempt: still 135.5
                Step(failedAt: 399.9, random: 0.5, wait: 5.6, rule: .prompt),  // 405.5
                Step(failedAt: 405.5, random: 0.5, wait: 30, rule: .backoff),  // the window closed at 400
            ])
    }

    /// The start opens a window too: a tracker that boots before its network is up connects
    /// within 10 s of it.
    @Test func theStartOpensAWindow() {
        var machine = Self.machine()
        _ = machine.start(now: .seconds(3))
        Self.check(
            &machine,
            [
                Step(failedAt: 3, random: 0, wait: 1, rule: .backoff),
                Step(failedAt: 4, random: 0, wait: 10, rule: .prompt),
                Step(failedAt: 14, random: 0.7, wait: 10, rule: .prompt),
            ], lost: false)
    }

    /// A first step at or above the ceiling (`mqtt.reconnect.initial-delay` of 30 s) is the
    /// ceiling's phase at once.
    @Test func aFirstStepAboveTheCeilingDrawsThePhaseAtOnce() {
        var machine = Self.connected(backoff: Backoff(initialDelay: .seconds(30)))
        Self.check(
            &machine,
            [
                Step(failedAt: 0, random: 0.5, wait: 5, rule: .prompt),
                Step(failedAt: 5, random: 0.5, wait: 10, rule: .prompt),
            ])
    }

    /// Issue 15's failure 3: a 30 s outage left a tracker offline for 66 s, its retry delay 44 s
    /// once the broker was back. Now, whatever the draws, the first attempt after the broker's
    /// return comes within 10 s of it.
    @Test(arguments: [0.0, 0.25, 0.5, 0.75, 0.999_999])
    func aThirtySecondOutageEndsWithinTenSecondsOfTheBrokersReturn(random: Double) {
        let back = Self.reconnection(Self.connected(), outage: 30) { random }
        #expect(back >= 0 && back <= 10, "back \(back) s after the broker")
    }

    @Test func theFormerPolicyCouldWaitAMinuteAfterTheBrokerWasBack() {
        // With the backoff alone (prompt retries off, the former policy), these draws give waits
        // of 0.5, 1, 2, 4, 8 and 3.2 s, then 60 s from 18.7 s: back 48.7 s after the broker. With
        // prompt retries: 0.5 s, then the phase at 5.5 s: back 5.5 s after it.
        var draws = [0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.0, 0.0].makeIterator()
        let former = Self.reconnection(Self.connected(promptRetry: MQTTPromptRetry(window: .zero)), outage: 30) {
            draws.next() ?? 0
        }
        #expect(former > 40, "back \(former) s after the broker")
        draws = [0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.0, 0.0].makeIterator()
        let now = Self.reconnection(Self.connected(), outage: 30) { draws.next() ?? 0 }
        #expect(now <= 10, "back \(now) s after the broker")
    }

    /// Fault scenario 4's long outage as a row (its test used to wait it out for two minutes on
    /// a real broker): after 120 s, the first attempt comes within the 10 s ceiling of the
    /// broker's return, or within scenario 4's former 2 s maximum delay; after 600 s, past the
    /// 5-minute window, within the backoff's maximum, 60 s.
    @Test(arguments: [(120.0, 60.0, 10.0), (120.0, 2.0, 2.0), (600.0, 60.0, 60.0)])
    func aLongOutageEndsWithinTheCeilingOfTheBrokersReturn(outage: Double, maximumDelay: Double, bound: Double) {
        for random in [0.0, 0.3, 0.6, 0.9] {
            let machine = Self.connected(backoff: Backoff(maximumDelay: .seconds(maximumDelay)))
            let back = Self.reconnection(machine, outage: outage) { random }
            #expect(back >= 0 && back <= bound, "random \(random): back \(back) s after the broker")
        }
    }

    /// Refusals that need a person keep the growing backoff inside the window: a broker that
    /// refuses the credentials is not asked again every 10 s by every tracker.
    @Test func refusalsThatNeedAPersonKeepTheGrowingBackoff() {
        var machine = Self.machine()
        _ = machine.start(now: .zero)
        let refusal = End(
            failure: LibraryFailure(code: .connectionRefused, text: "Connection Refused: not authorised."),
            refusal: .init(code: 5, text: "Connection Refused: not authorised."))
        var waits: [Duration] = []
        for attempt in 0..<7 {
            let action = machine.connectionEnded(refusal, now: .seconds(attempt), random: 0)
            guard case .wait(let wait, _, let rule) = action else {
                Issue.record("expected a wait, got \(action)")
                return
            }
            #expect(rule == .backoff)
            waits.append(wait)
            _ = machine.waitEnded()
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60].map { .seconds($0) })
    }

    /// Another client took the session over: the maximum delay, no jitter, even in the window;
    /// attempts that fail after it follow the policy again.
    @Test func aSessionTakenOverWaitsTheMaximumDelay() {
        var machine = Self.connected()
        let takenOver = End(
            failure: LibraryFailure(code: .connectionLost, text: "The connection was lost."),
            brokerDisconnect: .init(code: 0x8E, text: "Session taken over"))
        guard case .wait(let wait, _, let rule) = machine.connectionEnded(takenOver, now: .seconds(5), random: 0.9)
        else {
            Issue.record("expected a wait")
            return
        }
        #expect(wait == .seconds(60) && rule == .sessionTakenOver)
        _ = machine.waitEnded()
        #expect(machine.connectionEnded(Self.refused, now: .seconds(65), random: 0.5).rule == .prompt)
    }

    /// `reconnectSlowly(true)`: every lost connection waits the maximum delay, until it is turned off.
    @Test func reconnectingSlowlyWaitsTheMaximumAfterEveryLoss() {
        var machine = Self.connected(backoff: Backoff(maximumDelay: .seconds(5)))
        machine.reconnectSlowly(true)
        #expect(machine.connectionEnded(Self.reset, now: .seconds(1), random: 0.5).delay == .seconds(5))
        _ = machine.waitEnded()
        _ = machine.connectionAccepted(sessionPresent: false)
        #expect(machine.connectionEnded(Self.reset, now: .seconds(9), random: 0.5).rule == .slow)
        _ = machine.waitEnded()
        _ = machine.connectionAccepted(sessionPresent: false)
        machine.reconnectSlowly(false)
        #expect(machine.connectionEnded(Self.reset, now: .seconds(20), random: 0.5).rule == .backoff)
    }

    /// A maximum delay below the prompt interval (`mqtt.reconnect.max-delay: 2`, as the fault
    /// scenarios set it) is the ceiling: the phase is drawn within it.
    @Test func aShortMaximumDelayIsTheCeiling() {
        var machine = Self.connected(backoff: Backoff(maximumDelay: .seconds(2)))
        Self.check(
            &machine,
            [
                Step(failedAt: 0, random: 0.5, wait: 0.5, rule: .backoff),
                Step(failedAt: 0.5, random: 0.25, wait: 1.5, rule: .prompt),
                Step(failedAt: 2, random: 0.5, wait: 2, rule: .prompt),
            ])
    }

    /// A connection that comes back resets everything: the next loss starts from the first step
    /// with a new window and a new phase.
    @Test func aConnectionResetsTheCountTheWindowAndThePhase() {
        var machine = Self.connected()
        Self.check(
            &machine,
            [
                Step(failedAt: 0, random: 0, wait: 1, rule: .backoff),
                Step(failedAt: 1, random: 0.5, wait: 5, rule: .prompt),
                Step(failedAt: 6, random: 0.5, wait: 10, rule: .prompt),
            ])
        _ = machine.connectionAccepted(sessionPresent: false)
        Self.check(
            &machine,
            [
                Step(failedAt: 1000, random: 0, wait: 1, rule: .backoff),
                Step(failedAt: 1001, random: 0.1, wait: 9, rule: .prompt),
            ])
    }

    // MARK: Helpers

    /// Seconds from the broker's return, `outage` seconds after the loss at time 0, to the
    /// tracker's first attempt after it (which succeeds), with draws from `random`.
    static func reconnection(_ connected: Machine, outage: Double, random: () -> Double) -> Double {
        var machine = connected
        var now = Duration.zero
        var action = machine.connectionEnded(reset, now: now, random: random())
        while case .wait(let delay, _, _) = action {
            now += delay
            _ = machine.waitEnded()
            if now.inSeconds >= outage { return now.inSeconds - outage }
            action = machine.connectionEnded(refused, now: now, random: random())
        }
        Issue.record("the machine stopped waiting: \(action)")
        return .infinity
    }
}

extension MQTTConnectionStateMachine.Action {
    /// The wait's delay, if this is a wait.
    var delay: Duration? {
        if case .wait(let delay, _, _) = self { return delay }
        return nil
    }

    /// The wait's rule, if this is a wait.
    var rule: MQTTConnectionStateMachine.WaitRule? {
        if case .wait(_, _, let rule) = self { return rule }
        return nil
    }
}
