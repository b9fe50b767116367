import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Logging
import MQTT
import Testing
import TestSupport

/// The running agent's lifecycle against a private broker: intents, resume after SIGKILL,
/// orphans, dismissal dates across a restart, a full outbox. Each test watches the topics as an
/// independent subscriber and checks every payload against docs/schema.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct AgentLifecycleIntegrationTests {
    typealias Message = AgentHarness.Message

    @Test func intentsStartPauseResumeReportAndStopActivities() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let agent = try AgentHarness.agent(
                broker, state: state, environment: ["MYELINE_ACTIVITY_AUTOSTART": "false"])
            defer { agent.signal(SIGKILL) }
            try await observer.waitForLine(containing: "\"state\":\"online\"")
            try await CommandSender.with(broker) { sender in
                // Nothing runs yet.
                let early = try await sender.send(.stop)
                #expect(early.error == "no activity is running; start one first")

                let started = try await sender.send(.start)
                #expect(started.ok && started.intent == .start)
                let first = try #require(started.activity)
                try await observer.waitForLine(containing: "/activities/\(first)|")
                // A start while it runs answers with it; `new` asks for a second one.
                #expect(try await sender.send(.start).activity == first)
                let second = try #require(try await sender.send(.start, new: true).activity)
                #expect(second != first)

                #expect(try await sender.send(.pause).activity == second, "the newest by default")
                try await observer.waitForLine(description: "a paused envelope of \(second)") {
                    $0.contains("/activities/\(second)|") && $0.contains("\"paused\":true")
                }
                #expect(try await sender.send(.resume, activity: second).ok)
                let report = try await sender.send(.report, activity: first)
                #expect(report.ok && report.activity == first)

                #expect(try await sender.send(.stop, activity: first).ok)
                try await observer.waitForLine(description: "the clearing of \(first)") {
                    $0.hasPrefix("MSG|") && $0.contains("/activities/\(first)|0|")
                }
                let again = try await sender.send(.stop, activity: first)
                #expect(again.error == "no running activity \"\(first)\" on this device")

                // Bad input gets a reply saying why, when it has an id to answer.
                let unknown = try await sender.sendRaw(
                    #"{"schema":"myeline.command.v1","id":"bad-1","intent":"fly","timestamp":1}"#, id: "bad-1")
                #expect(!unknown.ok && unknown.intent == nil)
                #expect(unknown.error?.contains("intent") == true)
                try await sender.client.publish(
                    "myeline/van-7/cmd", payload: Array("not json at all".utf8), qos: .atLeastOnce)
                // 513 opening brackets, the last at the end: JSONDecoder traps on it (found by fuzzing),
                // and stopped the agent before the wire codec refused deep nesting unread.
                try await sender.client.publish(
                    "myeline/van-7/cmd", payload: Array(repeating: UInt8(ascii: "["), count: 513), qos: .atLeastOnce)
                let wrongType = try await sender.sendRaw(
                    #"{"schema":"myeline.command.v1","id":"bad-2","intent":"stop","timestamp":"noon"}"#,
                    id: "bad-2")
                #expect(wrongType.intent == nil && wrongType.error?.contains("timestamp") == true)
                // The agent goes on after all of it.
                #expect(try await sender.send(.report).activity == second)
            }
            agent.signal(SIGTERM)
            #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
            #expect(agent.output.contains("Refusing a malformed command"))
            try await observer.waitForLine(containing: "\"reason\":\"shutdown\"")
            await observer.stop()
            let messages = AgentHarness.messages(observer)
            let paused = try AgentHarness.envelopes(messages)
                .filter { $0.content.state.paused }
            #expect(!paused.isEmpty)
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }

    @Test func aKilledAgentResumesTheSameActivityAndSequence() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let first = try AgentHarness.agent(broker, state: state)
            defer { first.signal(SIGKILL) }
            // Mid-trip: a few track points are out.
            try await observer.waitForLine(containing: "\"seq\":5,")
            try await AgentHarness.kill(first)
            let before = AgentHarness.messages(observer)
            let lastEnvelopeMessage = try #require(before.filter(\.isEnvelope).last)
            let lastEnvelope = try #require(
                try? lastEnvelopeMessage.envelope(), "\(lastEnvelopeMessage)\n\(observer.output)")
            let lastPoint = try #require(try before.filter(\.isTrack).last?.trackPoint())
            let saved = try #require(try AgentRunIntegrationTests.savedActivities(in: state).first)
            #expect(saved.activityID == lastEnvelope.header.activity)
            #expect(saved.lastSeq >= lastEnvelope.header.seq)
            #expect(saved.trackSeq >= lastPoint.seq)

            let second = try AgentHarness.agent(broker, state: state, ["--speed", "20", "--loop", "--end-on-exit"])
            defer { second.signal(SIGKILL) }
            // The resumed activity's first envelope continues the sequence, on the same topic.
            let resumedLine = try await observer.waitForLine(description: "the resumed envelope") {
                $0.contains("\"seq\":\(saved.lastSeq + 1),") && $0.contains("\"event\":\"update\"")
            }
            let resumed = try #require(Message(resumedLine[...])).envelope()
            #expect(resumed.header.activity == saved.activityID)
            try await observer.waitForLine(description: "a track point after the restart") {
                $0.contains("/track|") && $0.contains("\"seq\":\(saved.trackSeq + 2),")
            }
            // No orphan: the broker holds this one activity only.
            let retained = try await AgentHarness.retainedActivities(broker)
            #expect(Array(retained.keys) == ["myeline/van-7/activities/\(saved.activityID)"])
            second.signal(SIGTERM)
            #expect(try await second.waitForExit() == 0, "\(second.tail)")
            try await observer.waitForLine(containing: "\"reason\":\"shutdown\"")
            await observer.stop()
            let messages = AgentHarness.messages(observer)
            let points = try AgentHarness.trackPoints(messages)
            #expect(Set(points.map(\.activity)).count == 1)
            // Every point in order, the second run's after the first's. Delivery is at least once:
            // a point published just before the SIGKILL, whose delivery was not yet recorded, comes
            // again, unchanged, after the restart.
            var firstCopies: [Int: TrackPoint] = [:]
            for point in points {
                if let copy = firstCopies[point.seq] {
                    #expect(copy == point, "a point delivered twice is the same point")
                } else {
                    firstCopies[point.seq] = point
                }
            }
            let unique = points.filter { point in
                defer { firstCopies[point.seq] = nil }
                return firstCopies[point.seq] != nil
            }
            #expect(unique.map(\.seq) == Array(1...unique.count))
            let envelopes = try AgentHarness.envelopes(messages)
            #expect(zip(envelopes, envelopes.dropFirst()).allSatisfy { $0.header.seq < $1.header.seq })
            #expect(envelopes.last?.header.event == .end)
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }

    @Test func activitiesTheAgentDoesNotKnowAreEndedAndCleared() async throws {
        try await TestBroker.with { broker in
            let observer = try await AgentHarness.observer(broker)
            defer { observer.signal(SIGKILL) }
            // A first agent's activity, left retained when its state directory is lost.
            try await withTemporaryDirectory { state in
                let lost = try AgentHarness.agent(broker, state: state)
                defer { lost.signal(SIGKILL) }
                try await observer.waitForLine(containing: "\"event\":\"start\"")
                try await AgentHarness.kill(lost)
            }
            let left = try await AgentHarness.retainedActivities(broker)
            try #require(left.count == 1)
            let orphan = try WireCodec.decode(
                ActivityEnvelope<LocationActivityAttributes>.self, from: Data(try #require(left.first).value.utf8))
            // And a payload no agent wrote, retained on one of the device's activity topics.
            try await MQTTClient.withClient(
                configuration: MQTTConfiguration(broker: broker.address, clientID: "intruder"),
                logger: Logger(label: "test")
            ) { client in
                try await client.waitUntilConnected()
                try await client.publish(
                    "myeline/van-7/activities/junk", payload: Array("{\"not\":\"an envelope\"}".utf8),
                    qos: .atLeastOnce, retain: true)
            }
            try await withTemporaryDirectory { state in
                let agent = try AgentHarness.agent(broker, state: state)
                defer { agent.signal(SIGKILL) }
                let orphanTopic = "myeline/van-7/activities/\(orphan.header.activity)"
                let endLine = try await observer.waitForLine(description: "the orphan's end") {
                    $0.contains("|\(orphanTopic)|") && $0.contains("\"event\":\"end\"")
                }
                let end = try #require(Message(endLine[...])).envelope()
                #expect(end.header.seq == orphan.header.seq + 1)
                #expect(end.dismissalDate != nil)
                try await observer.waitForLine(containing: "|\(orphanTopic)|0|")
                try await observer.waitForLine(containing: "|myeline/van-7/activities/junk|0|")
                // Left: the new agent's own activity only.
                let retained = try await AgentHarness.retainedActivities(broker)
                #expect(retained.count == 1)
                #expect(retained[orphanTopic] == nil && retained["myeline/van-7/activities/junk"] == nil)
                agent.signal(SIGTERM)
                #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
            }
            await observer.stop()
            try await AgentHarness.validateAgainstSchemas(
                AgentHarness.messages(observer).filter { !$0.topic.hasSuffix("/junk") })
        }
    }

    @Test func aLaterDismissalDateIsHonouredAfterARestart() async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let environment = ["MYELINE_ACTIVITY_DISMISSAL": "after:2"]
            let first = try AgentHarness.agent(broker, state: state, ["--end-on-exit"], environment: environment)
            defer { first.signal(SIGKILL) }
            let start = try await observer.waitForLine(containing: "\"event\":\"start\"")
            let activity = try #require(Message(start[...])).envelope().header.activity
            first.signal(SIGTERM)
            #expect(try await first.waitForExit() == 0, "\(first.tail)")
            let endLine = try await observer.waitForLine(containing: "\"event\":\"end\"")
            let end = try #require(Message(endLine[...])).envelope()
            let dismissal = try #require(end.dismissalDate)
            // The ended activity waits for its dismissal date on disk, not to be resumed.
            let waiting = try AgentRunIntegrationTests.savedActivities(in: state)
            #expect(waiting.map(\.activityID) == [activity])
            #expect(abs((waiting.first?.dismissalDate ?? .distantPast).timeIntervalSince(dismissal)) < 0.001)

            let second = try AgentHarness.agent(
                broker, state: state, environment: ["MYELINE_ACTIVITY_AUTOSTART": "false"])
            defer { second.signal(SIGKILL) }
            try await observer.waitForLine(containing: "|myeline/van-7/activities/\(activity)|0|")
            #expect(Date() >= dismissal, "cleared at its dismissal date, not before")
            second.signal(SIGTERM)
            #expect(try await second.waitForExit() == 0, "\(second.tail)")
            #expect(try AgentRunIntegrationTests.savedActivities(in: state).isEmpty)
            await observer.stop()
            try await AgentHarness.validateAgainstSchemas(AgentHarness.messages(observer))
        }
    }

    @Test func aFullOutboxDropsTheOldestPointsAndReportsHowMany() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { state in
                let capacity = 10
                let environment = ["MYELINE_OUTBOX_CAPACITY": "\(capacity)"]
                await broker.stop()
                let offline = try AgentHarness.agent(
                    broker, state: state, ["--speed", "max"], environment: environment)
                defer { offline.signal(SIGKILL) }
                #expect(try await offline.waitForExit() == 0, "\(offline.tail)")
                try await broker.start()
                let observer = try await AgentHarness.observer(broker)
                defer { observer.signal(SIGKILL) }
                // Back online, with nothing to track (a gpsd nobody listens for, no autostart):
                // it delivers what the outbox kept, and says how many were dropped.
                let expected = try await AgentRunIntegrationTests.acceptedFixes().count
                let online = try AgentHarness.agent(
                    broker, state: state, ["--end-on-exit"],
                    environment: environment.merging(["MYELINE_ACTIVITY_AUTOSTART": "false"]) { $1 },
                    source: "gpsd://127.0.0.1:\(try freeLoopbackPort())")
                defer { online.signal(SIGKILL) }
                try await observer.waitForLine(description: "the last track point") {
                    $0.contains("/track|") && $0.contains("\"seq\":\(expected),")
                }
                online.signal(SIGTERM)
                #expect(try await online.waitForExit() == 0, "\(online.tail)")
                try await observer.waitForLine(containing: "\"reason\":\"shutdown\"")
                await observer.stop()
                #expect(online.output.contains("event=agent.points.dropped"))

                let messages = AgentHarness.messages(observer)
                let points = try AgentHarness.trackPoints(messages)
                // The offline run's newest `capacity` points, in order.
                #expect(points.map(\.seq) == Array((expected - capacity + 1)...expected))
                let online0 = try messages.filter { $0.topic.hasSuffix("/status") }.map {
                    try WireCodec.decode(StatusMessage.self, from: $0.data)
                }.first { $0.state == .online }
                #expect(online0?.dropped == UInt64(expected - capacity))
                try await AgentHarness.validateAgainstSchemas(messages)
            }
        }
    }
}

/// The broker goes away for 30 seconds in the middle of a replay at 50 times real time: the
/// agent keeps tracking, its track points wait in the outbox on disk, and once the broker is
/// back every one arrives exactly once and in order, and the retained state is the latest.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct AgentBrokerOutageIntegrationTests {
    @Test(.tags(.slow)) func everyPointArrivesOnceAndInOrderAfterA30SecondOutage() async throws {
        // A persistent broker and a persistent observer session: the observer misses nothing
        // published while it reconnects, as a real consumer with a durable session would.
        try await TestBroker.with(extraConfiguration: ["max_queued_messages 1000000"], persistent: true) { broker in
            let observer = try await AgentHarness.observer(broker, ["-c", "-i", "outage-observer"])
            defer { observer.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                // Retrying every 2 s at most, so the test does not wait out a long backoff.
                let agent = try AgentHarness.agent(
                    broker, state: state, ["--speed", "50", "--loop"],
                    environment: ["MYELINE_MQTT_RECONNECT_MAX_DELAY": "2"])
                defer { agent.signal(SIGKILL) }
                try await observer.waitForLine(containing: "\"seq\":5,")
                await broker.stop()
                let down = Date()
                // The outage itself: 30 seconds (25 minutes of the recording) with no broker.
                try await Task.sleep(for: .seconds(30))
                try await broker.start()
                try await observer.waitForLine(timeout: .seconds(60), description: "the agent back online") { line in
                    AgentHarness.Message(line[...])?.isOnlineStatus(since: down) ?? false
                }
                agent.signal(SIGTERM)
                #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
                #expect(
                    agent.output.contains("event=mqtt.connection.lost")
                        || agent.output.contains("event=mqtt.connect.failed"))
            }
            try await observer.waitForLine(containing: "\"reason\":\"shutdown\"", timeout: .seconds(30))
            let retained = try await AgentHarness.retainedActivities(broker)
            await observer.stop()

            let messages = AgentHarness.messages(observer)
            let points = try AgentHarness.trackPoints(messages)
            // 30 s at 50 times real time is 25 minutes of a receiver that fixes about every 5 s.
            #expect(points.count > 100, "\(points.count) points")
            #expect(points.map(\.seq) == Array(1...points.count), "every point once, in order")
            #expect(Set(points.map(\.activity)).count == 1)
            #expect(zip(points, points.dropFirst()).allSatisfy { $0.time <= $1.time })
            // The retained envelope is the latest the agent published.
            let envelopes = try AgentHarness.envelopes(messages)
            let latest = try #require(envelopes.max { $0.header.seq < $1.header.seq })
            #expect(retained.count == 1)
            let kept = try WireCodec.decode(
                ActivityEnvelope<LocationActivityAttributes>.self, from: Data(try #require(retained.values.first).utf8))
            #expect(kept.header.seq == latest.header.seq)
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }
}

/// The agent on a real gpsd (fed a real receiver capture), as on a tracker: start, updates with
/// the receiver's positions, track points, and a stop, seen by an independent subscriber.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentGpsdIntegrationTests {
    @Test func theAgentTracksAReceiverThroughGpsd() async throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: AgentHarness.capture)))
        try await TestBroker.with { broker in
            let observer = try await AgentHarness.observer(broker)
            defer { observer.signal(SIGKILL) }
            try await TestGpsd.with { gpsd in
                try await withTemporaryDirectory { state in
                    let agent = try AgentHarness.agent(
                        broker, state: state, ["--end-on-exit"],
                        environment: ["MYELINE_UPDATES_MIN_DISTANCE": "0", "MYELINE_UPDATES_MIN_INTERVAL": "0"],
                        source: "gpsd://127.0.0.1:\(gpsd.port)")
                    defer { agent.signal(SIGKILL) }
                    try await gpsd.feed(bytes)
                    try await observer.waitForLine(containing: "/track|")
                    let stopped = try await CommandSender.with(broker) { sender in try await sender.send(.stop) }
                    #expect(stopped.ok)
                    try await observer.waitForLine(containing: "\"event\":\"end\"")
                    agent.signal(SIGTERM)
                    #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
                }
            }
            try await observer.waitForLine(containing: "\"reason\":\"shutdown\"")
            await observer.stop()
            let messages = AgentHarness.messages(observer)
            let envelopes = try AgentHarness.envelopes(messages)
            #expect(envelopes.first?.header.event == .start)
            #expect(envelopes.first?.content.state.latitude == nil, "no location before the first fix")
            let located = envelopes.filter { $0.content.state.latitude != nil }
            #expect(!located.isEmpty)
            // The receiver's own positions: the capture is of a receiver near 41.57 N, 93.75 W.
            for envelope in located {
                #expect(abs((envelope.content.state.latitude ?? 0) - 41.575) < 0.01)
                #expect(abs((envelope.content.state.longitude ?? 0) + 93.750) < 0.01)
            }
            let points = try AgentHarness.trackPoints(messages)
            #expect(!points.isEmpty)
            #expect(points.map(\.seq) == Array(1...points.count))
            #expect(envelopes.last?.header.event == .end)
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }
}

/// The intent subcommands against the real agent, as a shell script or cron job would use them.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentIntentCommandIntegrationTests {

    /// Runs `body` with a real agent (no autostart) on a private broker (given too, for other
    /// clients such as the board), an observer of its topics once it is online, and `cli`, which
    /// runs a subcommand against it to its end.
    static func withAgent(
        _ body: (
            TestBroker, TestProcess, TestProcess,
            (_ arguments: [String]) async throws -> IntentCommandIntegrationTests.Run
        ) async throws -> Void
    ) async throws {
        try await AgentHarness.scenario { broker, observer, state in
            let agent = try AgentHarness.agent(
                broker, state: state, environment: ["MYELINE_ACTIVITY_AUTOSTART": "false"])
            defer { agent.signal(SIGKILL) }
            try await observer.waitForLine(containing: "\"state\":\"online\"")
            let configuration = try IntentCommandIntegrationTests.emptyConfiguration(in: state)
            try await body(broker, agent, observer) { arguments in
                try await IntentCommandIntegrationTests.agent(
                    arguments + ["--device", "van-7", "--broker", "\(broker.address)", "--config", configuration])
            }
        }
    }

    @Test func theSubcommandsDriveARunningAgent() async throws {
        try await Self.withAgent { _, agent, observer, cli in

            let started = try await cli(["start"])
            #expect(started.status == 0)
            let activity = try #require(
                started.standardOutput.firstMatch(of: /van-7: start ok \(activity ([a-z0-9-]+)\)/)?.1)
            #expect(try await cli(["pause"]).status == 0)
            // The result comes when the agent has paused the trip; its envelope follows.
            try await observer.waitForLine(description: "the paused envelope") {
                $0.contains("/activities/\(activity)|") && $0.contains("\"paused\":true")
            }
            let refused = try await cli(["resume", "--activity", "no-such-trip"])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("no running activity \"no-such-trip\" on this device"))
            let report = try await cli(["report", "--json"])
            #expect(report.status == 0)
            let lines = report.standardOutput.split(separator: "\n")
            #expect(lines.count == 3, "result, status, envelope:\n\(report.standardOutput)")
            let envelope = try WireCodec.decode(
                ActivityEnvelope<LocationActivityAttributes>.self, from: Data(try #require(lines.last).utf8))
            #expect(envelope.header.activity == String(activity))
            #expect(envelope.content.state.paused)
            let stopped = try await cli(["stop"])
            #expect(stopped.status == 0 && stopped.standardOutput.contains(String(activity)))
            #expect(try await cli(["stop"]).status == 1, "nothing runs any more")
            agent.signal(SIGTERM)
            #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
            await observer.stop()
            try await AgentHarness.validateAgainstSchemas(AgentHarness.messages(observer))
        }
    }

    /// Push-to-start with a destination and a driver, then push updates of the destination, a
    /// status text and an alert, through the command line and a real broker, as the delivery
    /// seed's server pushes its progress; a refused update says why and changes nothing.
    @Test func pushToStartAndPushUpdatesThroughTheCommandLine() async throws {
        try await Self.withAgent { _, agent, observer, cli in

            let started = try await cli([
                "start", "--destination", "Depot:52.52,13.40", "--driver", "Ana", "--status", "Loading",
            ])
            #expect(started.status == 0, "\(started.standardError)")
            let activity = String(
                try #require(started.standardOutput.firstMatch(of: /van-7: start ok \(activity ([a-z0-9-]+)\)/)?.1))
            try await observer.waitForLine(description: "the start with its attributes") {
                $0.contains("/activities/\(activity)|") && $0.contains("\"driver\":\"Ana\"")
                    && $0.contains("\"status\":\"Loading\"")
            }

            let updated = try await cli([
                "update", "--destination", "Market Hall:52.53,13.41", "--status", "Out for delivery",
                "--alert-title", "New stop", "--alert-body", "Market Hall first",
            ])
            #expect(updated.status == 0, "\(updated.standardError)")
            #expect(
                updated.standardOutput.trimmingCharacters(in: .newlines) == "van-7: update ok (activity \(activity))")
            try await observer.waitForLine(description: "the pushed update") {
                $0.contains("/activities/\(activity)|") && $0.contains("\"status\":\"Out for delivery\"")
            }

            let refused = try await cli(["update", "--status", String(repeating: "x", count: 5000)])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("refused update: the content state is "))
            #expect(refused.standardError.contains("over the 4096 bytes (4 KiB) ActivityKit also allows"))
            let mistake = try await cli(["update", "--destination", "Depot:91,13.40"])
            #expect(mistake.status == 64)
            #expect(mistake.standardError.contains("--destination: latitude 91.0 is outside -90...90 degrees"))

            let report = try await cli(["report", "--json"])
            let lines = report.standardOutput.split(separator: "\n")
            let envelope = try WireCodec.decode(
                ActivityEnvelope<LocationActivityAttributes>.self, from: Data(try #require(lines.last).utf8))
            #expect(envelope.header.activity == activity)
            #expect(envelope.attributes.driver == "Ana")
            #expect(envelope.attributes.destination?.name == "Depot")
            #expect(envelope.content.state.destination?.name == "Market Hall")
            #expect(envelope.content.state.status == "Out for delivery")

            agent.signal(SIGTERM)
            #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
            await observer.stop()
            let messages = AgentHarness.messages(observer)
            let alerted = try AgentHarness.envelopes(messages).filter { $0.alert != nil }
            #expect(alerted.map(\.alert?.title) == ["New stop"])
            #expect(alerted.first?.content.state.destination?.latitude == 52.53)
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }
}
