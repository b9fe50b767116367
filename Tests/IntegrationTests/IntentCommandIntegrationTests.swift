import Foundation
import LiveActivity
import MyelineWire
import Logging
import MQTT
import Testing
import TestSupport

/// The intent subcommands (`myeline-agent start|stop|pause|resume|report`), the built binary,
/// against a private broker and a responder written here in the agent's place: it subscribes to
/// the command topic, checks the command against the schema and answers on the result topic.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct IntentCommandIntegrationTests {
    static let device = try! DeviceID("van-7")
    static let activityID = "3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10"

    /// How a run of the command line ended.
    struct Run {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// Runs `myeline-agent ARGUMENTS` to its end, with standard error kept apart.
    static func agent(_ arguments: [String]) async throws -> Run {
        try await withTemporaryDirectory { directory in
            let errors = "\(directory)/stderr"
            let process = try TestProcess(
                name: "myeline-agent", executable: try builtProductPath("myeline-agent"), arguments: arguments,
                standardErrorFile: errors)
            defer { process.signal(SIGKILL) }
            let status = try await withDeadline(.seconds(60), what: "myeline-agent to exit", process: process) {
                try await process.waitForExit()
            }
            return Run(
                status: status, standardOutput: process.output,
                standardError: try String(contentsOfFile: errors, encoding: .utf8))
        }
    }

    /// The arguments that point the command line at `broker`, with a configuration file of no keys.
    static func target(_ broker: TestBroker, prefix: String? = nil) throws -> [String] {
        [
            "--device", device.rawValue, "--broker", "\(broker.address)", "--config",
            try emptyConfiguration(in: broker.directory),
        ]
            + (prefix.map { ["--prefix", $0] } ?? [])
    }

    /// A configuration file without keys in `directory`, so that no /etc/myeline/agent.yaml of this
    /// machine counts and every value comes from the flags.
    static func emptyConfiguration(in directory: String) throws -> String {
        let path = "\(directory)/agent.yaml"
        try "device: {}\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `body` while a responder answers the first command on `PREFIX/van-7/cmd` with the
    /// payloads `answers` makes (published in order to the result topic); returns what `body`
    /// returned and the command's payload as received.
    /// What the responder publishes after its answers (`republished`, as the agent does for
    /// `report`) comes to the command line live, after the `retained` copies.
    static func withResponder(
        _ broker: TestBroker, prefix: TopicPrefix = .default, retained: [(topic: String, payload: String)] = [],
        republished: [(topic: String, payload: String)] = [],
        answers: @escaping @Sendable (Command) throws -> [[UInt8]], _ body: () async throws -> Run
    ) async throws -> (run: Run, command: [UInt8]) {
        let topics = TopicTree(prefix: prefix)
        let configuration = MQTTConfiguration(broker: broker.address, clientID: "responder-\(UUID().uuidString)")
        return try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "responder")) {
            client in
            try await client.waitUntilConnected()
            for message in retained {
                try await client.publish(message.topic, payload: Array(message.payload.utf8), retain: true)
            }
            let commands = try await client.subscribe(to: [topics.command(device: device)])
            let responder = Task { () throws -> [UInt8]? in
                for await message in commands {
                    let command = try WireCodec.decode(Command.self, from: Data(message.payload))
                    for answer in try answers(command) {
                        try await client.publish(topics.commandResult(device: device), payload: answer)
                    }
                    // What a `report` makes the agent publish again, as it does: retained.
                    for message in republished {
                        try await client.publish(message.topic, payload: Array(message.payload.utf8), retain: true)
                    }
                    return message.payload
                }
                return nil
            }
            let run = try await body()
            let command = try await withDeadline(.seconds(20), what: "the responder to answer") {
                try await responder.value
            }
            return (run, try #require(command, "the command line sent a command:\n\(run)"))
        }
    }

    /// Checks a payload against a schema of docs/schema with scripts/validate-json.py.
    static func validate(_ payload: [UInt8], schema: String) async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = try executablePath("python3", package: "python3 python3-jsonschema")
        let output = try await withTemporaryDirectory { directory in
            try Data(payload).write(to: URL(fileURLWithPath: "\(directory)/instance.json"))
            let manifest = "\(directory)/cases.json"
            let cases = #"{"cases":[{"name":"sent","schema":"\#(schema)","instance":"instance.json","valid":true}]}"#
            try cases.write(toFile: manifest, atomically: true, encoding: .utf8)
            return try await runProgram(
                python, [repository.appendingPathComponent("scripts/validate-json.py").path, manifest])
        }
        #expect(output.hasPrefix("PASS\t"), "\(output)")
    }

    @Test func startPrintsTheResultAndSendsAValidCommand() async throws {
        try await TestBroker.with { broker in
            let before = Date()
            let (run, payload) = try await Self.withResponder(broker) { command in
                [
                    Array(
                        try WireCodec.encode(
                            CommandResult.success(for: command, activity: Self.activityID, timestamp: Date())))
                ]
            } _: {
                try await Self.agent(["start", "--new"] + Self.target(broker))
            }
            #expect(run.status == 0)
            #expect(run.standardOutput == "van-7: start ok (activity \(Self.activityID))")
            #expect(run.standardError.isEmpty)

            try await Self.validate(payload, schema: "command.json")
            let command = try WireCodec.decode(Command.self, from: Data(payload))
            #expect(command.intent == .start)
            #expect(command.new)
            #expect(command.activity == nil)
            #expect(UUID(uuidString: command.id) != nil && command.id == command.id.lowercased())
            // Milliseconds on the wire: the sent time is within the run, give or take the rounding.
            #expect(command.timestamp.timeIntervalSince(before) > -0.001)
            #expect(command.timestamp.timeIntervalSinceNow < 0.001)
        }
    }

    @Test func aRefusalExitsOneWithTheReasonOnStandardError() async throws {
        try await TestBroker.with { broker in
            let (run, payload) = try await Self.withResponder(broker) { command in
                [
                    Array(
                        try WireCodec.encode(
                            CommandResult.failure(for: command, error: "the trip is paused already", timestamp: Date()))
                    )
                ]
            } _: {
                try await Self.agent(["pause", "--activity", Self.activityID, "--json"] + Self.target(broker))
            }
            #expect(run.status == 1)
            #expect(run.standardError == "Error: van-7 refused pause: the trip is paused already\n")
            // --json prints the result as received.
            let result = try WireCodec.decode(CommandResult.self, from: Data(run.standardOutput.utf8))
            #expect(result.error == "the trip is paused already")

            try await Self.validate(payload, schema: "command.json")
            let command = try WireCodec.decode(Command.self, from: Data(payload))
            #expect(command.intent == .pause)
            #expect(command.activity == Self.activityID)
            #expect(!command.new)
            #expect(result.id == command.id)
        }
    }

    @Test func otherResultsAndGarbageAreIgnoredUntilTheAnswer() async throws {
        try await TestBroker.with { broker in
            let (run, _) = try await Self.withResponder(broker) { command in
                let other = try Command(id: "someone-else", intent: command.intent, timestamp: Date())
                return [
                    Array(
                        try WireCodec.encode(CommandResult.failure(for: other, error: "not yours", timestamp: Date()))),
                    Array("not json at all".utf8),
                    Array(#"{"schema":"myeline.command-result.v1","id":"\#(command.id)","ok":true}"#.utf8),
                    Array(try WireCodec.encode(CommandResult.success(for: command, timestamp: Date()))),
                ]
            } _: {
                try await Self.agent(["stop"] + Self.target(broker))
            }
            #expect(run.status == 0)
            #expect(run.standardOutput == "van-7: stop ok")
            // The invalid payloads are logged as warnings; the other command's result is not an error.
            #expect(run.standardError.components(separatedBy: "Ignored an invalid payload").count == 3)
            #expect(!run.standardError.contains("not yours"))
        }
    }

    @Test func reportPrintsTheResultTheStatusAndTheActivity() async throws {
        let prefix = try TopicPrefix("fleet/test")
        let topics = TopicTree(prefix: prefix)
        let status =
            #"{"device":"van-7","schema":"myeline.status.v1","since":1700000000,"state":"online","version":"0.1.0"}"#
        let envelope = """
            {"activity":"\(Self.activityID)","attributes":{"deviceID":"van-7","name":"Van 7"},\
            "attributes-type":"location","content-state":{"distance":1234.5,"elapsed":600,"fix":"3d",\
            "latitude":52.520008,"longitude":13.404954,"paused":true},"device":"van-7","event":"update",\
            "relevance-score":0,"schema":"myeline.activity.v1","seq":2,"timestamp":1700000060}
            """
        // What the broker kept before the report: the activity's first event.
        let earlier = """
            {"activity":"\(Self.activityID)","attributes":{"deviceID":"van-7","name":"Van 7"},\
            "attributes-type":"location","content-state":{"distance":0,"elapsed":0,"fix":"none",\
            "paused":false},"device":"van-7","event":"start",\
            "relevance-score":0,"schema":"myeline.activity.v1","seq":1,"timestamp":1700000000}
            """
        try await TestBroker.with { broker in
            let activityTopic = topics.activity(device: Self.device, activityID: Self.activityID)
            let (run, payload) = try await Self.withResponder(
                broker, prefix: prefix,
                retained: [(topics.status(device: Self.device), status), (activityTopic, earlier)],
                republished: [(topics.status(device: Self.device), status), (activityTopic, envelope)]
            ) { command in
                [
                    Array(
                        try WireCodec.encode(
                            CommandResult.success(for: command, activity: Self.activityID, timestamp: Date())))
                ]
            } _: {
                try await Self.agent(["report"] + Self.target(broker, prefix: "fleet/test"))
            }
            #expect(run.status == 0)
            #expect(
                run.standardOutput == """
                    van-7: report ok (activity \(Self.activityID))
                    status: online since 2023-11-14T22:13:20Z, version 0.1.0
                    activity \(Self.activityID): update 2 at 2023-11-14T22:14:20Z, 52.520008 13.404954, 3d fix, \
                    1235 m in 600 s, paused
                    """)
            #expect(try WireCodec.decode(Command.self, from: Data(payload)).intent == .report)

            let (json, _) = try await Self.withResponder(
                broker, prefix: prefix,
                republished: [(topics.status(device: Self.device), status), (activityTopic, envelope)]
            ) { command in
                [
                    Array(
                        try WireCodec.encode(
                            CommandResult.success(for: command, activity: Self.activityID, timestamp: Date())))
                ]
            } _: {
                try await Self.agent(["report", "--json"] + Self.target(broker, prefix: "fleet/test"))
            }
            let lines = json.standardOutput.split(separator: "\n").map(String.init)
            try #require(lines.count == 3, "\(json)")
            #expect(try WireCodec.decode(CommandResult.self, from: Data(lines[0].utf8)).activity == Self.activityID)
            #expect(lines[1] == status)
            #expect(lines[2] == envelope)
        }
    }

    @Test func noAnswerExitsThreeAfterTheTimeout() async throws {
        try await TestBroker.with { broker in
            let run = try await Self.agent(["resume", "--timeout", "1"] + Self.target(broker))
            #expect(run.status == 3)
            #expect(run.standardOutput.isEmpty)
            #expect(run.standardError == "Error: no answer from van-7 within 1 s: is its agent running?\n")
        }
    }

    @Test func anUnreachableBrokerExitsThree() async throws {
        try await withTemporaryDirectory { directory in
            let socket = "\(directory)/nobody-listens.sock"
            let run = try await Self.agent(
                [
                    "stop", "--timeout", "1", "--device", "van-7", "--broker", "unix:\(socket)", "--config",
                    try Self.emptyConfiguration(in: directory),
                ])
            #expect(run.status == 3)
            #expect(run.standardOutput.isEmpty)
            #expect(run.standardError.hasPrefix("Error: cannot reach the broker unix:\(socket) within 1 s: "))
        }
    }

    @Test(arguments: [
        (["--broker", "ftp://broker.example"], "mqtt.broker"),
        (["--timeout", "0"], "--timeout"),
        (["--activity", "Not/An/Id"], "--activity"),
    ])
    func configurationMistakesExitSixtyFour(arguments: [String], named: String) async throws {
        try await withTemporaryDirectory { directory in
            let run = try await Self.agent(
                ["start", "--device", "van-7", "--config", try Self.emptyConfiguration(in: directory)] + arguments)
            #expect(run.status == 64)
            #expect(run.standardOutput.isEmpty)
            #expect(run.standardError.contains(named), "\(run.standardError)")
        }
    }
}
