import Foundation
import LiveActivity
import MyelineWire
import Logging
import MQTT
import Testing
import TestSupport

/// Runs the built `myeline-agent` against a private broker and watches its topics as an
/// independent client would: `mosquitto_sub` on `myeline/#`, each message on one line.
enum AgentHarness {
    /// A real NMEA capture of a receiver (gpsd's regression logs), 122 epochs over 11 minutes.
    static let capture = AgentRunIntegrationTests.capture

    /// The agent of `device` (`van-7` unless given) with its state in `state`; `arguments` and
    /// `environment` add to the defaults (the capture replayed at 20 times its pace, in a loop).
    /// It connects to `broker`, or to `address` when given (a proxy in front of the broker).
    /// A `launcher` (a program and its arguments, such as `unshare --mount sh -c SCRIPT`) is run
    /// instead, with the agent's path and arguments after its own; it must exec the agent, so
    /// that the process's PID is the agent's.
    static func agent(
        _ broker: TestBroker, state: String, _ arguments: [String] = ["--speed", "20", "--loop"],
        environment: [String: String] = [:], source: String = capture, device: String = "van-7",
        address: BrokerAddress? = nil, launcher: [String] = []
    ) throws -> TestProcess {
        let agent = try builtProductPath("myeline-agent")
        let command =
            [
                agent, "run", "--device", device, "--broker", "\(address ?? broker.address)", "--source", source,
                "--state-dir", state,
            ]
            + arguments
        let program = launcher.first ?? agent
        // The spool inside the test's state directory, which the test removes (the default, in
        // /dev/shm, would outlive an agent the test kills).
        let spool = ["MYELINE_STORAGE_SPOOL_DIRECTORY": state + "/spool"]
        return try TestProcess(
            name: "myeline-agent \(device)", executable: program,
            arguments: launcher.isEmpty ? Array(command.dropFirst()) : Array(launcher.dropFirst()) + command,
            environment: ProcessInfo.processInfo.environment.merging(spool) { $1 }.merging(environment) { $1 })
    }

    /// Runs `body` with a private broker, an observer of its topics (``observer(_:_:)``, killed
    /// however `body` ends) and a temporary state directory.
    static func scenario<R>(
        _ body: (TestBroker, TestProcess, String) async throws -> R
    ) async throws -> R {
        try await TestBroker.with { broker in
            let observer = try await Self.observer(broker)
            defer { observer.signal(SIGKILL) }
            return try await withTemporaryDirectory { state in try await body(broker, observer, state) }
        }
    }

    /// `mosquitto_sub` on every topic under `myeline`, subscribed when this returns; `extra`
    /// arguments such as `-c -i ID` for a persistent session.
    static func observer(_ broker: TestBroker, _ extra: [String] = [], topics: [String] = ["myeline/#"]) async throws
        -> TestProcess
    {
        guard case .unix(let socket) = broker.address.transport else {
            throw TestSupportError("the agent tests use a broker on a unix socket")
        }
        return try await observer(connection: ["--unix", socket], extra, topics: topics)
    }

    /// `mosquitto_sub` on every topic under `myeline` (or on `topics`) of the broker that the
    /// `mosquitto_sub` arguments in `connection` reach (such as `-h localhost -p PORT --cafile CA -u USER -P PW`),
    /// subscribed at `qos`.
    ///
    /// A QoS 2 subscriber prints a message when the broker releases it (PUBREL). Across a broker
    /// that is killed, use QoS 1: libmosquitto 2.0 keeps a QoS 2 message whose PUBREL never came
    /// across the reconnection, and the new broker, numbering its packets from 1 again, releases
    /// its own message of the same packet id with that PUBREL: the old message is printed in the
    /// new one's place and the new one never (seen: seq 12 printed where 37 belonged).
    static func observer(
        connection: [String], _ extra: [String] = [], topics: [String] = ["myeline/#"], qos: Int = 2
    ) async throws -> TestProcess {
        let observer = try ContractIntegrationTests.mosquittoSub(
            connection + topics.flatMap { ["-t", $0] } + ["-q", "\(qos)", "-d", "-F", "MSG|%r|%t|%l|%p"] + extra)
        do {
            try await observer.waitForLine(containing: "SUBACK")
        } catch {
            observer.signal(SIGKILL)
            throw error
        }
        return observer
    }

    /// The messages an observer printed, in order.
    static func messages(_ observer: TestProcess) -> [Message] {
        observer.output.split(separator: "\n").compactMap(Message.init)
    }

    /// The activity envelopes among `messages` (clearing messages left out), in order.
    static func envelopes(_ messages: [Message]) throws -> [ActivityEnvelope<LocationActivityAttributes>] {
        try messages.filter { $0.isEnvelope && !$0.payload.isEmpty }.map { try $0.envelope() }
    }

    /// The track points among `messages`, in order.
    static func trackPoints(_ messages: [Message]) throws -> [TrackPoint] {
        try messages.filter(\.isTrack).map { try $0.trackPoint() }
    }

    /// Stops `agent` with SIGTERM (it must exit 0), waits for its `offline` status with reason
    /// `shutdown` at `observer`, stops the observer and returns the messages it printed.
    static func stop(_ agent: TestProcess, observedBy observer: TestProcess) async throws -> [Message] {
        agent.signal(SIGTERM)
        #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
        try await observer.waitForLine(containing: "\"reason\":\"shutdown\"", timeout: .seconds(30))
        await observer.stop()
        return messages(observer)
    }

    /// Kills `process` with SIGKILL, as a crash or a power cut would, and waits until it is gone.
    static func kill(_ process: TestProcess) async throws {
        process.signal(SIGKILL)
        _ = try await process.waitForExit()
    }

    /// The retained messages under `myeline/van-7/activities/+` now, by topic.
    static func retainedActivities(_ broker: TestBroker) async throws -> [String: String] {
        try await retained(broker, filter: "myeline/van-7/activities/+").mapValues {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// The retained messages matching `filter` now, by topic.
    static func retained(_ broker: TestBroker, filter: String) async throws -> [String: [UInt8]] {
        try await MQTTClient.withClient(
            configuration: MQTTConfiguration(
                broker: broker.address, clientID: "retained-\(UUID().uuidString.prefix(8))"),
            logger: Logger(label: "test")
        ) { client in
            try await client.waitUntilConnected()
            // Retained messages come first, then this live one, outside the observed topics.
            let marker = "harness/marker/\(UUID().uuidString.prefix(8).lowercased())"
            let subscription = try await client.subscribe(to: [filter, marker])
            try await client.publish(marker, payload: Array("marker".utf8), qos: .atLeastOnce)
            var retained: [String: [UInt8]] = [:]
            for await message in subscription {
                if message.topic == marker { break }
                if message.retain { retained[message.topic] = message.payload }
            }
            return retained
        }
    }

    /// One message as `mosquitto_sub -F 'MSG|%r|%t|%l|%p'` prints it.
    struct Message: Hashable, Sendable {
        var retained: Bool
        var topic: String
        var payload: String

        init?(_ line: Substring) {
            let parts = line.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 5, parts[0] == "MSG" else { return nil }
            (retained, topic, payload) = (parts[1] == "1", parts[2], parts[4])
        }

        var data: Data { Data(payload.utf8) }
        var isTrack: Bool { topic.hasSuffix("/track") }
        var isEnvelope: Bool { topic.contains("/activities/") && !isTrack }

        func envelope() throws -> ActivityEnvelope<LocationActivityAttributes> {
            try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: data)
        }

        func trackPoint() throws -> TrackPoint { try WireCodec.decode(TrackPoint.self, from: data) }

        /// Whether this is an `online` status of a connection made after `date`: the agent back
        /// after an outage that began then.
        func isOnlineStatus(since date: Date) -> Bool {
            guard topic.hasSuffix("/status"), let status = try? WireCodec.decode(StatusMessage.self, from: data)
            else { return false }
            return status.state == .online && (status.since ?? .distantPast) > date
        }
    }

    /// Checks every payload the agent published against docs/schema with scripts/validate-json.py
    /// (empty payloads, which clear retained messages, have no schema; commands are the test's own).
    static func validateAgainstSchemas(_ messages: [Message]) async throws {
        let cases: [(String, String)] = messages.compactMap { message in
            guard !message.payload.isEmpty else { return nil }
            let schema: String
            if message.isTrack {
                schema = "track.json"
            } else if message.isEnvelope {
                schema = "activity-envelope.json"
            } else if message.topic.hasSuffix("/status") {
                schema = "status.json"
            } else if message.topic.hasSuffix("/cmd/result") {
                schema = "command-result.json"
            } else {
                return nil
            }
            return (schema, message.payload)
        }
        try #require(!cases.isEmpty)
        let python = try executablePath("python3", package: "python3 python3-jsonschema")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/validate-json.py").path
        let output = try await withTemporaryDirectory { directory in
            var manifest: [[String: Any]] = []
            for (index, (schema, payload)) in cases.enumerated() {
                let name = "payload-\(index).json"
                try Data(payload.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
                manifest.append(["name": name, "schema": schema, "instance": name, "valid": true])
            }
            let file = directory + "/cases.json"
            try JSONSerialization.data(withJSONObject: ["cases": manifest]).write(to: URL(fileURLWithPath: file))
            return try await runProgram(python, [script, file])
        }
        let failures = output.split(separator: "\n").filter { !$0.hasPrefix("PASS\t") }
        #expect(failures.isEmpty, "payloads the schemas reject:\n\(failures.joined(separator: "\n"))")
    }
}

/// Sends commands to the agent of `van-7` as any MQTT client can, and waits for the results.
struct CommandSender {
    let client: MQTTClient

    static func with<R>(
        _ broker: TestBroker, isolation: isolated (any Actor)? = #isolation, _ body: (CommandSender) async throws -> R
    ) async throws -> R {
        try await MQTTClient.withClient(
            configuration: MQTTConfiguration(broker: broker.address, clientID: "sender-\(UUID().uuidString.prefix(8))"),
            logger: Logger(label: "test")
        ) { client in
            try await client.waitUntilConnected()
            return try await body(CommandSender(client: client))
        }
    }

    /// Sends a command and returns the agent's result for it.
    func send(_ intent: Command.Intent, activity: String? = nil, new: Bool = false) async throws -> CommandResult {
        let id = "req-\(UUID().uuidString.prefix(8).lowercased())"
        let command = try Command(id: id, intent: intent, activity: activity, new: new, timestamp: Date())
        return try await sendRaw(String(decoding: try WireCodec.encode(command), as: UTF8.self), id: id)
    }

    /// Publishes `payload` as a command and returns the result carrying `id`.
    func sendRaw(_ payload: String, id: String) async throws -> CommandResult {
        let results = try await client.subscribe(to: ["myeline/van-7/cmd/result"])
        try await client.publish("myeline/van-7/cmd", payload: Array(payload.utf8), qos: .atLeastOnce)
        return try await withDeadline(.seconds(20), what: "the result of command \(id)") {
            for await message in results {
                guard let result = try? WireCodec.decode(CommandResult.self, from: Data(message.payload)) else {
                    continue
                }
                if result.id == id { return result }
            }
            throw TestSupportError("the result subscription ended before the result of \(id)")
        }
    }
}
