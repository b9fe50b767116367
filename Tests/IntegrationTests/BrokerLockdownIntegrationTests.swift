import Foundation
import LiveActivity
import MyelineWire
import Logging
import MQTT
import TestSupport
import Testing

/// `deploy/mosquitto/production.conf` and `deploy/mosquitto/acl`, as they are (paths and port
/// substituted), on a real mosquitto with credentials made by `make-credentials.sh`: what a stolen
/// tracker's credentials can and cannot do.
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct BrokerLockdownIntegrationTests {
    static let logger = Logger(label: "test")

    static func aggregator(_ broker: TestBroker, _ credentials: FleetCredentials, _ arguments: [String]) throws
        -> TestProcess
    {
        try TestProcess(
            name: "myeline-aggregator", executable: builtProductPath("myeline-aggregator"), arguments: arguments,
            environment: ["PATH": "/usr/bin:/bin"].merging(credentials.environment(broker, "aggregator")) { $1 })
    }

    @Test func aDevicesWritesToAnotherDevicesTopicsNeverReachTheBoard() async throws {
        try await FleetCredentials.withLockedBroker { broker, credentials in
            let board = try Self.aggregator(broker, credentials, ["--follow", "--json"])
            defer { board.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                // The real agent of dev-b, with its password and the CA, as on a tracker.
                let agent = try AgentHarness.agent(
                    broker, state: state, environment: credentials.environment(broker, "dev-b"), device: "dev-b")
                defer { agent.signal(SIGKILL) }
                try await board.waitForLine(timeout: .seconds(30), description: "dev-b's activity on the board") {
                    $0.contains("\"change\":\"updated\"") && $0.contains("\"device\":\"dev-b\"")
                }

                // A stolen dev-a tracker's credentials, used to write as the running dev-b.
                try await MQTTClient.withClient(configuration: credentials.client(broker, "dev-a"), logger: Self.logger)
                {
                    thief in
                    try await thief.waitUntilConnected()
                    let forged: [(String, [UInt8], MQTTQoS)] = [
                        ("myeline/dev-b/status", Self.onlineStatus("dev-b"), .atLeastOnce),
                        (
                            "myeline/dev-b/activities/forged", AggregatorIntegrationTests.envelope("dev-b", "forged"),
                            .atLeastOnce
                        ),
                        ("myeline/dev-b/activities/forged/track", Array("{}".utf8), .exactlyOnce),
                        ("myeline/dev-b/cmd/result", Array("{}".utf8), .atLeastOnce),
                        ("myeline/dev-b/cmd", Array("{}".utf8), .atLeastOnce),
                    ]
                    for (topic, payload, qos) in forged {
                        let error = await #expect(throws: MQTTError.self, "\(topic)") {
                            try await thief.publish(topic, payload: payload, qos: qos, retain: qos == .atLeastOnce)
                        }
                        #expect(error?.code == .publishRefused, "\(topic): \(String(describing: error))")
                    }
                    // Then a write dev-a may make: the broker delivers one client's messages in order,
                    // so once the board has this one, it would have had the forged ones before.
                    try await thief.publish(
                        "myeline/dev-a/activities/marker",
                        payload: AggregatorIntegrationTests.envelope("dev-a", "marker"),
                        qos: .atLeastOnce)
                }
                try await board.waitForLine(containing: "\"activity\":\"marker\"")
                #expect(!board.output.contains("forged"), "the board saw a forged message:\n\(board.output)")
                #expect(!agent.output.contains("did not publish"), "\(agent.output)")
            }
            // Nothing forged was retained either: a new board sees dev-b's own activity only.
            let once = try Self.aggregator(broker, credentials, ["--once", "--json"])
            defer { once.signal(SIGKILL) }
            #expect(
                try await withDeadline(.seconds(30), what: "--once", process: once) { try await once.waitForExit() }
                    == 0)
            #expect(once.output.contains("\"device\":\"dev-b\""))
            #expect(!once.output.contains("forged"), "\(once.output)")
        }
    }

    @Test func aDeviceCannotReadAnotherDevicesCommands() async throws {
        try await FleetCredentials.withLockedBroker { broker, credentials in
            try await MQTTClient.withClient(configuration: credentials.client(broker, "dev-a"), logger: Self.logger) {
                deviceA in
                try await deviceA.waitUntilConnected()
                // mosquitto grants the subscription, then withholds each message dev-a may not read.
                let snooping = try await deviceA.subscribe(to: ["myeline/dev-b/cmd", "myeline/dev-a/cmd"])
                try await MQTTClient.withClient(
                    configuration: credentials.client(broker, "dev-b"), logger: Self.logger
                ) { deviceB in
                    try await deviceB.waitUntilConnected()
                    let own = try await deviceB.subscribe(to: ["myeline/dev-b/cmd"])
                    try await MQTTClient.withClient(
                        configuration: credentials.client(broker, "operator"), logger: Self.logger
                    ) { operatorClient in
                        try await operatorClient.waitUntilConnected()
                        // In this order: dev-a would receive dev-b's command before its own.
                        try await operatorClient.publish("myeline/dev-b/cmd", payload: Array("for-b".utf8))
                        try await operatorClient.publish("myeline/dev-a/cmd", payload: Array("for-a".utf8))
                    }
                    var ownMessages = own.makeAsyncIterator()
                    #expect(try #require(await ownMessages.next()).payload == Array("for-b".utf8))
                }
                var snooped = snooping.makeAsyncIterator()
                let first = try #require(await snooped.next())
                #expect(first.topic == "myeline/dev-a/cmd")
                #expect(first.payload == Array("for-a".utf8))
            }
        }
    }

    @Test func anonymousClientsAndWrongPasswordsAreRefused() async throws {
        try await FleetCredentials.withLockedBroker { broker, credentials in
            var attempts = [try credentials.client(broker, nil)]
            var wrong = try credentials.client(broker, "dev-a")
            wrong.credentials = MQTTCredentials(username: "dev-a", password: "not-the-password")
            attempts.append(wrong)
            var dressedUp = try credentials.client(broker, "dev-a")
            dressedUp.credentials = MQTTCredentials(username: "dev-b", password: try credentials.password("dev-a"))
            attempts.append(dressedUp)
            for configuration in attempts {
                try await MQTTClient.withClient(configuration: configuration, logger: Self.logger) { client in
                    let error = await #expect(throws: MQTTError.self) { try await client.waitUntilConnected() }
                    #expect(error?.code == .connectionRefused, "\(String(describing: error))")
                }
            }
            // The right password is let in.
            try await MQTTClient.withClient(configuration: credentials.client(broker, "dev-a"), logger: Self.logger) {
                client in
                try await client.waitUntilConnected()
                #expect(client.isConnected)
            }
        }
    }

    @Test func withCertificateIdentityAnotherAuthoritysCertificateIsRefused() async throws {
        try await FleetCredentials.withLockedBroker(certificateIdentity: true) { broker, credentials in
            try await withTemporaryDirectory { directory in
                // A certificate for dev-a, but from an authority of the thief's own.
                let other = try await TestCertificates.make(in: directory, prefix: "other", clientName: "dev-a")
                var impostor = try credentials.client(broker, "dev-a")
                impostor.credentials = nil
                impostor.tls = MQTTTLSConfiguration(
                    caFile: credentials.caFile, certificateFile: other.clientCertificateFile,
                    keyFile: other.clientKeyFile)
                try await MQTTClient.withClient(configuration: impostor, logger: Self.logger) { client in
                    try await broker.currentProcess?.waitForLine(
                        timeout: .seconds(20), description: "the refused handshake"
                    ) { $0.contains("certificate verify failed") || $0.contains("OpenSSL Error") }
                    #expect(!client.isConnected)
                }
                #expect(broker.currentProcess?.output.contains("New client connected") == false)
            }
            // dev-a's own certificate is its identity: its own topics, and no other device's.
            try await MQTTClient.withClient(
                configuration: credentials.client(broker, "dev-a", certificate: true), logger: Self.logger
            ) { client in
                try await client.waitUntilConnected()
                try await client.publish("myeline/dev-a/status", payload: Self.onlineStatus("dev-a"))
                let error = await #expect(throws: MQTTError.self) {
                    try await client.publish("myeline/dev-b/status", payload: Self.onlineStatus("dev-b"))
                }
                #expect(error?.code == .publishRefused)
            }
        }
    }

    @Test func theBoardCannotCommandButAnOperatorCan() async throws {
        try await FleetCredentials.withLockedBroker { broker, credentials in
            let observer = try await AgentHarness.observer(
                connection: try credentials.mosquittoArguments(broker, "watcher"))
            defer { observer.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                let agent = try AgentHarness.agent(
                    broker, state: state, environment: credentials.environment(broker, "dev-a"), device: "dev-a")
                defer { agent.signal(SIGKILL) }
                try await observer.waitForLine(containing: "myeline/dev-a/activities/")

                try await MQTTClient.withClient(
                    configuration: credentials.client(broker, "aggregator"), logger: Self.logger
                ) { board in
                    try await board.waitUntilConnected()
                    let command = try Command(
                        id: "from-the-board", intent: .stop, activity: nil, new: false, timestamp: Date())
                    let error = await #expect(throws: MQTTError.self) {
                        try await board.publish("myeline/dev-a/cmd", payload: Array(try WireCodec.encode(command)))
                    }
                    #expect(error?.code == .publishRefused)
                }
                // The operator's command, through the intent command line, is answered.
                let report = try await Self.operatorCommand(
                    broker, credentials, ["report", "--device", "dev-a", "--json", "--timeout", "20"],
                    in: broker.directory)
                #expect(report.status == 0, "\(report.standardError)")
                #expect(report.standardOutput.contains("\"device\":\"dev-a\""), "\(report.standardOutput)")
                let messages = AgentHarness.messages(observer)
                #expect(messages.contains { $0.topic == "myeline/dev-a/cmd/result" })
                #expect(!messages.contains { $0.payload.contains("from-the-board") }, "\(messages.map(\.topic))")
            }
        }
    }

    @Test func aBrokerConfigurationThatDoesNotLoadIsReportedInMosquittosWords() async throws {
        let error = await #expect(throws: TestSupportError.self) {
            try await TestBroker.with(
                listener: .configured(tls: false) { _, port in ["listener \(port) 127.0.0.1", "allow_anonymous flase"] }
            ) { _ in }
        }
        #expect(
            error?.description.contains("Error: Invalid allow_anonymous value (flase).") == true,
            "\(String(describing: error))")
    }

    /// Device ids are topic levels: one with `/`, `+` or `#` would write elsewhere or be a wildcard.
    @Test(arguments: ["dev/b", "dev+", "dev#", "+", "#"])
    func aDeviceIDWithATopicCharacterIsRefusedBeforeConnecting(device: String) async throws {
        try await TestBroker.with { broker in
            let run = try await IntentCommandIntegrationTests.agent([
                "run", "--device", device, "--broker", "\(broker.address)", "--config",
                try IntentCommandIntegrationTests.emptyConfiguration(in: broker.directory),
            ])
            #expect(run.status == 64)
            #expect(run.standardError.contains("device.id (from --device): invalid device id"), "\(run.standardError)")
            #expect(broker.currentProcess?.output.contains("New client connected") == false)
        }
    }

    /// Runs `myeline-agent ARGUMENTS` with the operator's credentials.
    static func operatorCommand(
        _ broker: TestBroker, _ credentials: FleetCredentials, _ arguments: [String], in directory: String
    ) async throws -> IntentCommandIntegrationTests.Run {
        let errors = "\(directory)/operator.stderr"
        let process = try TestProcess(
            name: "myeline-agent", executable: try builtProductPath("myeline-agent"),
            arguments: arguments + [
                "--broker", "\(broker.address)", "--config",
                try IntentCommandIntegrationTests.emptyConfiguration(in: directory),
            ],
            environment: ["PATH": "/usr/bin:/bin"].merging(credentials.environment(broker, "operator")) { $1 },
            standardErrorFile: errors)
        defer { process.signal(SIGKILL) }
        let status = try await withDeadline(.seconds(60), what: "myeline-agent to exit", process: process) {
            try await process.waitForExit()
        }
        return IntentCommandIntegrationTests.Run(
            status: status, standardOutput: process.output,
            standardError: try String(contentsOfFile: errors, encoding: .utf8))
    }

    static func onlineStatus(_ device: String) -> [UInt8] {
        Array(try! WireCodec.encode(StatusMessage.online(device: DeviceID(device), since: Date())))
    }
}
