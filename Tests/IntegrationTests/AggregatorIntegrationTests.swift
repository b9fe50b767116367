import Foundation
import LiveActivity
import Logging
import MQTT
import TestSupport
import Testing

/// `myeline-aggregator` against a real private mosquitto: the board in tmux, `--once --json` with
/// 10,000 retained activities, the truncated bootstrap, and the hostile corpus.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct AggregatorIntegrationTests {
    static let tunedBroker = ["max_queued_messages 0", "max_inflight_messages 1000", "sys_interval 1"]

    static func envelope(
        _ device: String, _ activity: String = "a1", seq: Int = 1, event: String = "start", stale: Double? = nil,
        name: String? = nil
    ) -> [UInt8] {
        var object = HostileCorpus.validEnvelope(device: device, activity: activity)
        object["seq"] = seq
        object["event"] = event
        object["attributes"] = ["deviceID": device, "name": name ?? device]
        object["stale-date"] = stale
        if event == "end" { object["dismissal-date"] = Date().timeIntervalSince1970 + 3600 }
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// Publishes retained messages, then waits until the broker has them all (a QoS 1 message after them is acknowledged).
    static func publish(_ messages: [(String, [UInt8])], to broker: TestBroker, retain: Bool = true) async throws {
        let configuration = MQTTConfiguration(broker: broker.address, clientID: "publisher-\(UUID())")
        try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test")) { client in
            try await client.waitUntilConnected()
            for (topic, payload) in messages {
                try await client.publish(topic, payload: payload, qos: .atMostOnce, retain: retain)
            }
            try await client.publish("test/done", payload: [1], qos: .atLeastOnce)
        }
    }

    /// `myeline-aggregator ARGUMENTS` on `broker`; `environment` adds to a bare `PATH`.
    static func aggregator(
        _ broker: TestBroker, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> TestProcess {
        try TestProcess(
            name: "myeline-aggregator", executable: builtProductPath("myeline-aggregator"),
            arguments: ["--broker", broker.address.description] + arguments,
            environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
    }

    @Test func onceJSONShowsTenThousandRetainedActivities() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let messages = (0..<10_000).map { ("myeline/dev-\($0)/activities/a1", Self.envelope("dev-\($0)")) }
            try await Self.publish(messages, to: broker)
            let board = try Self.aggregator(broker, ["--once", "--json"])
            let status = try await withDeadline(.seconds(60), what: "--once --json", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 0)
            let lines = board.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.count == 10_000)
            let devices = lines.compactMap { line -> Substring? in
                guard let range = line.range(of: "\"device\":\"dev-[0-9]+\"", options: .regularExpression) else {
                    return nil
                }
                return line[range]
            }
            #expect(Set(devices).count == 10_000)
            #expect(!board.output.contains("max_queued_messages"))
        }
    }

    /// `--follow --json` writes each change as a line when it happens: the row, a newer seq, the
    /// row turning stale with time, its device going offline, and its removal.
    @Test func followJSONStreamsEveryChange() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let board = try Self.aggregator(broker, ["--follow", "--json"])
            defer { board.signal(SIGKILL) }
            let topic = "myeline/van-7/activities/a1"
            try await Self.publish(
                [(topic, Self.envelope("van-7", stale: Date().timeIntervalSince1970 + 2))], to: broker)
            try await board.waitForLine(containing: #""change":"updated","device":"van-7""#)
            try await Self.publish(
                [(topic, Self.envelope("van-7", seq: 2, event: "update", stale: Date().timeIntervalSince1970 + 2))],
                to: broker)
            try await board.waitForLine(containing: #""seq":2"#)
            try await board.waitForLine(containing: #""state":"stale""#)
            let offline = #"{"schema":"myeline.status.v1","device":"van-7","state":"offline","version":"1"}"#
            try await Self.publish([("myeline/van-7/status", Array(offline.utf8))], to: broker)
            try await board.waitForLine(containing: #""state":"offline""#)
            try await Self.publish([(topic, [])], to: broker)
            try await board.waitForLine(containing: #"{"activity":"a1","change":"removed","device":"van-7"}"#)
            let lines = board.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
            #expect(lines.filter { $0.contains(#""seq":1,"#) && $0.contains(#""change":"updated""#) }.count == 1)
            // SIGTERM (systemd's stop) ends it cleanly, whatever it was doing.
            board.signal(SIGTERM)
            #expect(try await board.waitForExit() == 0)
            #expect(!board.output.contains("Error:"))
        }
    }

    /// Used to hang: the sync topic's SUBACK, queued behind the cut bootstrap, never came.
    @Test func aTruncatedBootstrapIsDetectedAndNamed() async throws {
        // mosquitto's defaults (max_queued_messages 1000), with $SYS every second.
        try await TestBroker.with(extraConfiguration: ["sys_interval 1"]) { broker in
            let messages = (0..<3_000).map { ("myeline/dev-\($0)/activities/a1", Self.envelope("dev-\($0)")) }
            try await Self.publish(messages, to: broker)
            // Wait until the broker's own count includes them, so that the board can compare.
            let configuration = MQTTConfiguration(broker: broker.address, clientID: "sys-\(UUID())")
            try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test")) { client in
                let sys = try await client.subscribe(to: ["$SYS/broker/retained messages/count"])
                for await message in sys where Int(String(decoding: message.payload, as: UTF8.self)) ?? 0 >= 3_000 {
                    break
                }
            }
            let board = try Self.aggregator(broker, ["--once", "--log-level", "warning"])
            let status = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 0)
            #expect(board.output.contains("WARNING: only "))
            #expect(board.output.contains("set max_queued_messages in mosquitto.conf"))
            #expect(board.output.contains("Retained bootstrap truncated: only 1,"))
        }
    }

    @Test func hostileInputIsCountedAndTheBoardCarriesOn() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let corpus = HostileCorpus.cases()
            try await Self.publish(corpus.map { ($0.topic, $0.payload) }, to: broker)
            try await Self.publish([("myeline/van-7/activities/a1", Self.envelope("van-7", name: "Van 7"))], to: broker)
            let board = try Self.aggregator(broker, ["--once"])
            let status = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 0)
            #expect(board.output.contains("1 activities: 1 active"))
            // Every hostile message is counted (the 1 MiB ones too); none is shown.
            #expect(board.output.contains("· \(corpus.count) rejected"))
            #expect(
                board.output.split(separator: "\n").contains {
                    $0.hasPrefix("van-7") && $0.contains("Van 7       ACTIVE")
                })
        }
    }

    /// The full-screen board in tmux with real agents: rows appear with the receiver's position, turn
    /// stale, go offline when an agent is killed, end and go at their dismissal date, the filter key
    /// works, and `q` restores the terminal.
    @Test(.timeLimit(.minutes(2))) func theBoardInTmuxWithRealAgents() async throws {
        let tmux = try executablePath("tmux", package: "tmux")
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            try await withTemporaryDirectory { directory in
                let socket = "\(directory)/tmux.sock"
                func run(_ arguments: [String]) async throws -> String {
                    try await runProgram(tmux, ["-S", socket] + arguments)
                }
                // The shell records the board's exit status in a file: tmux's own record of it is
                // not reliably there when the pane is reported dead.
                let command =
                    "\(try builtProductPath("myeline-aggregator")) --broker \(broker.address.description) "
                    + "2>\(directory)/board.log; echo $? > \(directory)/status"
                _ = try await run(["new-session", "-d", "-x", "120", "-y", "40", "-s", "board", command])
                // The tmux server this test started, stopped by its PID however the test ends.
                let server =
                    pid_t(
                        try await run(["display", "-p", "#{pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                defer { if server > 0 { kill(server, SIGTERM) } }
                _ = try await run(["set-option", "-t", "board", "remain-on-exit", "on"])

                // Four trackers replaying a real receiver's capture. truck-2's content is stale one
                // second after each fix, and it publishes at most every 5 s; taxi-5's ended row goes
                // 2 s after its end.
                var agents: [String: TestProcess] = [:]
                defer { for agent in agents.values { agent.signal(SIGKILL) } }
                let settings: [(String, [String: String])] = [
                    ("van-7", [:]),
                    ("truck-2", ["MYELINE_UPDATES_STALE_AFTER": "1"]),
                    ("bike-4", [:]),
                    ("taxi-5", ["MYELINE_ACTIVITY_DISMISSAL": "after:2"]),
                ]
                for (device, environment) in settings {
                    try FileManager.default.createDirectory(
                        atPath: "\(directory)/\(device)", withIntermediateDirectories: true)
                    agents[device] = try AgentHarness.agent(
                        broker, state: "\(directory)/\(device)", environment: environment, device: device)
                }
                func waitForPane(_ what: String, _ predicate: @escaping @Sendable (String) -> Bool) async throws
                    -> String
                {
                    try await withDeadline(.seconds(30), what: what) {
                        while true {
                            let pane = try await runProgram(tmux, ["-S", socket, "capture-pane", "-p", "-t", "board"])
                            if predicate(pane) { return pane }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
                /// The row of `device` in `pane`, if shown.
                @Sendable func row(_ device: String, in pane: String) -> Substring? {
                    pane.split(separator: "\n").first { $0.hasPrefix(device + " ") }
                }
                // Rows appear with the receiver's position (41.57 N, 93.75 W).
                let first = try await waitForPane("four rows with positions") { pane in
                    pane.contains("4 activities")
                        && ["van-7", "bike-4", "taxi-5"].allSatisfy { row($0, in: pane)?.contains("41.57") == true }
                }
                #expect(row("van-7", in: first)?.contains("ACTIVE") == true)
                #expect(try await run(["display", "-p", "-t", "board", "#{alternate_on}"]).contains("1"))
                _ = try await waitForPane("truck-2 to turn stale") { row("truck-2", in: $0)?.contains("STALE") == true }

                // A killed tracker goes offline: the broker publishes its will.
                try await AgentHarness.kill(try #require(agents["bike-4"]))
                _ = try await waitForPane("bike-4 offline") { row("bike-4", in: $0)?.contains("OFFLINE") == true }

                // A stopped activity shows as ended, then goes at its dismissal date.
                let stop = try await IntentCommandIntegrationTests.agent([
                    "stop", "--device", "taxi-5", "--broker", "\(broker.address)", "--config",
                    try IntentCommandIntegrationTests.emptyConfiguration(in: directory),
                ])
                #expect(stop.status == 0, "stop: \(stop.standardError)")
                _ = try await waitForPane("taxi-5 ended") { row("taxi-5", in: $0)?.contains("ENDED") == true }
                let dismissed = try await waitForPane("taxi-5 to go") { $0.contains("3 activities") }
                #expect(row("taxi-5", in: dismissed) == nil)
                #expect(row("van-7", in: dismissed)?.contains("ACTIVE") == true, "the others stay")

                _ = try await run(["send-keys", "-t", "board", "/", "t", "r", "Enter"])
                let filtered = try await waitForPane("the filter") { $0.contains("filter: tr ·") }
                #expect(row("truck-2", in: filtered) != nil && row("van-7", in: filtered) == nil)
                _ = try await run(["send-keys", "-t", "board", "q"])
                let statusFile = "\(directory)/status"
                let status = try await withDeadline(.seconds(20), what: "the board to quit") {
                    while true {
                        if let text = try? String(contentsOfFile: statusFile, encoding: .utf8), text.hasSuffix("\n") {
                            return text.trimmingCharacters(in: .whitespacesAndNewlines)
                        }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                #expect(status == "0", "the board's exit status")
                let after = try await run(["display", "-p", "-t", "board", "#{alternate_on}"])
                #expect(after.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "the alternate screen is left")
            }
        }
    }
}
